// Starting a process inside cgroups made for it: a fixed shell wrapper joins them, then execs the program.
import type { Duplex, Readable } from 'node:stream';

/**
 * Joins the cgroups named before `--` (writing 0 to cgroup.procs moves the writing shell itself),
 * says so on fd `fd`, then execs the rest: the program starts inside its cgroups and cannot fork
 * before it is there. Fixed text; every value is an argument, never parsed by the shell.
 */
function joinScript(fd: number, waitForGo: boolean): string {
  // With waitForGo the wrapper reads a line back on the same fd (a socket pair) before the exec.
  return (
    'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; ' +
    `printf j >&${fd}; ${waitForGo ? `read -r _ <&${fd} || exit 125; ` : ''}exec ${fd}>&-; exec "$@"`
  );
}

/**
 * The argv that runs `argv` inside the cgroups whose cgroup.procs files are given; it reports on `fd`.
 * With `waitForGo` it then waits for a line on `fd` before it execs the program (see goWhenJoined): the
 * harness opens a timed window before the program can start, however late it hears the report.
 */
export function joinArgv(procsFiles: readonly string[], argv: readonly string[], fd = 3, waitForGo = false): string[] {
  if (!Number.isInteger(fd) || fd < 3 || fd > 9) throw new Error(`join: fd ${fd} is not 3-9`);
  return ['/bin/sh', '-c', joinScript(fd, waitForGo), 'tunebench-join', ...procsFiles, '--', ...argv];
}

/**
 * The harness's half of waitForGo: when the wrapper says it joined, `onJoined` runs (the timed window
 * opens), then the wrapper is told to exec the program.
 */
export function goWhenJoined(pipe: Duplex, onJoined: () => void): void {
  pipe.once('data', () => {
    onJoined();
    // The wrapper is blocked reading this line; if it has died, the error is the pipe's and is ignored.
    pipe.on('error', () => undefined);
    pipe.write('\n');
  });
}

/** Resolves true when the join wrapper said it joined, false when its fd closed without a word. */
export function joinedSignal(stream: Readable | null | undefined): Promise<boolean> {
  if (!stream) return Promise.resolve(false);
  return new Promise((resolve) => {
    let seen = false;
    stream.on('data', (c: Buffer) => {
      if (c.includes('j')) seen = true;
    });
    for (const event of ['close', 'end', 'error']) stream.once(event, () => resolve(seen));
  });
}
