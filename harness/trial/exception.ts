// The exception a failed trial died of, from the end of its stderr: a Python traceback's last line and
// the frame it was raised in, a Node.js error's line, or argparse's; what the terminal, summary.md and
// the report show.
import type { TrialException } from '../domain/index.js';

/** `  File "/x/train.py", line 42, in forward` */
const FRAME = /^\s*File "([^"]+)", line (\d+), in (\S+)/;
/** An exception's line: `AttributeError: ...`, `torch.OutOfMemoryError: ...`, `KeyboardInterrupt`, Node's `Error: ...`. */
const RAISED = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)|Error)\b(:.*)?$/;
/** argparse's `prog: error: message` (exit 2), printed without a traceback. */
const USAGE_ERROR = /^\S+: error: .+$/;

/** The exception's line and where it was raised (Python, Node.js, argparse); undefined when the tail has none. */
export function exceptionOf(stderrTail: string): TrialException | undefined {
  const lines = stderrTail.split('\n').map((l) => l.replace(/\s+$/, ''));
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!RAISED.test(line.trim()) || /^\s/.test(line)) continue;
    // The innermost frame above it: the last `File ..., line ...` before the exception's line.
    for (let j = i - 1; j >= 0; j--) {
      const f = FRAME.exec(lines[j]!);
      if (f) {
        // A package's __init__.py is named with its package: tunebench/__init__.py.
        const file = f[1]!
          .split('/')
          .slice(-2)
          .join('/')
          .replace(/^.*\/(?!__init__\.py$)/, '');
        return { message: line.trim().slice(0, 300), where: `${file}, line ${f[2]}, in ${f[3]}` };
      }
    }
    return { message: line.trim().slice(0, 300) };
  }
  // No exception: argparse's "prog: error: unrecognized arguments ..." is the message; else nothing (the
  // outcome's reason says what is known).
  const usage = lines.filter((l) => USAGE_ERROR.test(l)).at(-1);
  return usage ? { message: usage.trim().slice(0, 300) } : undefined;
}
