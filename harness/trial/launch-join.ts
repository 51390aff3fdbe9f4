// Starting a process inside cgroups made for it: a fixed shell wrapper joins them, then execs the program.
// The wrapper runs with a clean environment (WRAPPER_ENV): nothing the user controls (LD_PRELOAD, LD_AUDIT,
// in workload.env or the harness's own) can run code before the process is in its cgroups. The program's
// environment is read from a file the harness wrote, once the wrapper has joined.
import { chmodSync, writeFileSync } from 'node:fs';
import type { Duplex, Readable } from 'node:stream';

/** The wrapper's own environment until it has joined: a PATH for nothing (it runs only builtins). */
export const WRAPPER_ENV: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin' };

/**
 * Joins the cgroups named before `--` (writing 0 to cgroup.procs moves the writing shell itself),
 * says so on fd `fd`, reads the environment file named first (`. file`: export lines the harness wrote),
 * then execs the rest: the program starts inside its cgroups and cannot fork before it is there. Fixed
 * text; every value is an argument, never parsed by the shell.
 */
function joinScript(fd: number, waitForGo: boolean, sourceEnv: boolean): string {
  // With waitForGo the wrapper reads a line back on the same fd (a socket pair) before the exec.
  return (
    'e=$1; shift; while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; ' +
    `printf j >&${fd}; ${waitForGo ? `read -r _ <&${fd} || exit 125; ` : ''}exec ${fd}>&-; ` +
    `${sourceEnv ? '. "$e" || exit 125; ' : ''}exec "$@"`
  );
}

/**
 * limits.cgroupfs: read-only. In a cgroup namespace and a mount namespace of its own, the cgroup mounts
 * named before `--` are made read-only, then the environment file (first argument) is read and the
 * program runs without CAP_SYS_ADMIN (setpriv drops it from the bounding set): root as it may be, it can
 * write no cgroup file and remount nothing. Fixed text; every value is an argument.
 */
const ISOLATE_SCRIPT =
  'e=$1; shift; while [ "$1" != -- ]; do mount -o remount,bind,ro "$1" || exit 125; shift; done; shift; ' +
  '. "$e" || exit 125; exec "$@"';

/** The programs the read-only isolation runs (util-linux), by absolute path: never the workload's PATH's. */
export const ISOLATION_PROGRAMS = { unshare: '/usr/bin/unshare', setpriv: '/usr/bin/setpriv' } as const;

function isolated(argv: readonly string[], envFile: string, mounts: readonly string[]): string[] {
  const { unshare, setpriv } = ISOLATION_PROGRAMS;
  return [
    ...[unshare, '--cgroup', '--mount', '--propagation', 'private', '--'],
    ...['/bin/sh', '-c', ISOLATE_SCRIPT, 'tunebench-isolate', envFile, ...mounts, '--'],
    ...[setpriv, '--bounding-set', '-sys_admin', '--'],
    ...argv,
  ];
}

/**
 * The argv that runs `argv` inside the cgroups whose cgroup.procs files are given, with the environment of
 * `envFile` (writeEnvFile); it reports on `fd`. With `waitForGo` it then waits for a line on `fd` before it
 * execs the program (see goWhenJoined): the harness opens a timed window before the program can start,
 * however late it hears the report. Spawn it with WRAPPER_ENV as its environment.
 */
export function joinArgv(
  procsFiles: readonly string[],
  argv: readonly string[],
  envFile: string,
  fd = 3,
  waitForGo = false,
  /** limits.cgroupfs: read-only: these cgroup mount points are made read-only for the program (ISOLATE_SCRIPT). */
  readOnlyMounts?: readonly string[],
): string[] {
  if (!Number.isInteger(fd) || fd < 3 || fd > 9) throw new Error(`join: fd ${fd} is not 3-9`);
  const program = readOnlyMounts ? isolated(argv, envFile, readOnlyMounts) : argv;
  return [
    ...['/bin/sh', '-c', joinScript(fd, waitForGo, !readOnlyMounts), 'tunebench-join', envFile],
    ...[...procsFiles, '--', ...program],
  ];
}

/** A variable the shell can export: a name of letters, digits and underscores, not starting with a digit. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Writes `env` as the wrapper's environment file (mode 0600): one `export NAME='value'` line per variable,
 * every value single-quoted (a quote inside becomes '\''), so the shell runs nothing of it. A name the
 * shell cannot export (the harness's own environment may hold one, such as BASH_FUNC_f%%) is left out.
 */
export function writeEnvFile(path: string, env: Readonly<Record<string, string | undefined>>): void {
  const lines = Object.entries(env)
    .filter((e): e is [string, string] => e[1] !== undefined && NAME.test(e[0]))
    .map(([k, v]) => `export ${k}='${v.replace(/'/g, "'\\''")}'\n`);
  writeFileSync(path, lines.join(''), { mode: 0o600 });
  chmodSync(path, 0o600);
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
