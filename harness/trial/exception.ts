// The exception a failed trial died of, from the end of its stderr: a Python traceback's last line and
// the frame it was raised in, or a Node.js error's; what the terminal, summary.md and the report show.
import type { TrialException } from '../domain/index.js';

/** `  File "/x/train.py", line 42, in forward` */
const FRAME = /^\s*File "([^"]+)", line (\d+), in (\S+)/;
/** The line a Python traceback ends with: `AttributeError: ...`, `torch.OutOfMemoryError: ...`, `KeyboardInterrupt`. */
const RAISED = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)|[A-Z][A-Za-z]*Error)\b(:.*)?$/;

/** The exception's last line and where it was raised, else the last line printed; undefined for an empty tail. */
export function exceptionOf(stderrTail: string): TrialException | undefined {
  const lines = stderrTail.split('\n').map((l) => l.replace(/\s+$/, ''));
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!RAISED.test(line.trim()) || /^\s/.test(line)) continue;
    // The innermost frame above it: the last `File ..., line ...` before the exception's line.
    for (let j = i - 1; j >= 0; j--) {
      const f = FRAME.exec(lines[j]!);
      if (f) {
        const file = f[1]!.split('/').pop()!;
        return { message: line.trim().slice(0, 300), where: `${file}, line ${f[2]}, in ${f[3]}` };
      }
    }
    return { message: line.trim().slice(0, 300) };
  }
  // No traceback (argparse's "error: unrecognized arguments", a C++ abort): the last line it printed.
  const last = lines
    .filter((l) => l.trim() !== '')
    .at(-1)
    ?.trim();
  return last ? { message: last.slice(0, 300) } : undefined;
}
