// Starting a process inside cgroups made for it: a fixed shell wrapper joins them, then execs the program.
import type { Readable } from 'node:stream';

/**
 * Joins the cgroups named before `--` (writing 0 to cgroup.procs moves the writing shell itself),
 * says so on fd `fd`, then execs the rest: the program starts inside its cgroups and cannot fork
 * before it is there. Fixed text; every value is an argument, never parsed by the shell.
 */
function joinScript(fd: number): string {
  return (
    'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; ' +
    `printf j >&${fd}; exec ${fd}>&-; exec "$@"`
  );
}

/** The argv that runs `argv` inside the cgroups whose cgroup.procs files are given; it reports on `fd`. */
export function joinArgv(procsFiles: readonly string[], argv: readonly string[], fd = 3): string[] {
  if (!Number.isInteger(fd) || fd < 3 || fd > 9) throw new Error(`join: fd ${fd} is not 3-9`);
  return ['/bin/sh', '-c', joinScript(fd), 'tunebench-join', ...procsFiles, '--', ...argv];
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
