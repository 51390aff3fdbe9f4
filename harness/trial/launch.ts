// How a trial's process starts: spawned afresh (under the cap's prefix), or forked from a warm server
// (the cap set in the child). Both give the same handle to the code that watches the trial.
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { spawn, type SpawnOptions } from 'node:child_process';
import type { Duplex, Readable } from 'node:stream';
import { CLK_TCK } from '../telemetry/cpu.js';
import { ConfigError, TrialError } from '../errors.js';
import { setMemoryLimit, type TrialCgroup } from './cgroup.js';
import { capsTree, type MemoryLimit } from './limits.js';
import { identify, type KnownProcess } from './pids.js';
import { giveTo, type RunAs } from './run-as.js';
import { goWhenJoined, ISOLATION_PROGRAMS, joinArgv, joinedSignal, WRAPPER_ENV, writeEnvFile } from './launch-join.js';
import { cgroupMounts } from './cgroup-host.js';

/** The trial mark's variable (TRIAL_MARK_ENV of process.ts, which imports this module). */
const MARK_ENV = 'TUNEBENCH_TRIAL_MARK';
import { TailBuffer } from './tail.js';
import type { WarmServer } from './warm-server.js';
import type { TrialStdio } from '../workloads/workload.js';

/**
 * Seconds the workload's pipes may stay open after its process exited (a descendant that escaped
 * into its own session holds them) before the harness closes them and kills that descendant.
 */
export const PIPE_GRACE_SECONDS = 1;
export const STDERR_TAIL_BYTES = 8 * 1024;
/** The least cap a fork gets when the server alone holds nearly all of limits.memory (it then fails as a fresh process would). */
const MIN_FORK_CAP_BYTES = 16 * 2 ** 20;

/** What launching needs of the trial's spec. */
export interface LaunchSpec {
  argv: readonly string[];
  cwd?: string;
  scratchDir: string;
  trialId: string;
  /** Unique to this attempt of the trial: names its scratch files, which no earlier attempt's orphan shares. */
  attemptId: string;
  fork?: WarmServer;
  /** A fresh process's standard streams; absent: stdin none, stdout drained, stderr's tail kept. */
  stdio?: TrialStdio;
  /** limits.user: the process runs as this user; the harness moves it into its cgroups (it could not). */
  runAs?: RunAs;
  /** limits.cgroupfs: read-only (launch-join.ts). */
  readOnlyCgroupfs?: true;
}

export interface Launched {
  pid: number;
  /** Resolves false when the trial's process could not join its cgroups (it never ran the workload). */
  joined: Promise<boolean>;
  /** The trial's first process as the harness verified it: the only pid it signals by number. */
  root: KnownProcess | undefined;
  /** Bytes of the warm server's memory that the fork shares and that count against the trial's cap. */
  sharedBytes?: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Of a fresh process, after its exit: the timed window and its CPU time (a fork has none). */
  timing?: () => ProcessTiming | undefined;
  /** After the exit: waits for the output to be complete; `kill` ends what still holds it. */
  settle(kill: () => void): Promise<void>;
  stderrTail(): string;
  /** Why the program never started, or undefined when it ran. */
  startFailure(exit: { code: number | null; signal: string | null }, killed: boolean): string | undefined;
}

/**
 * The timed window of a fresh process: from just before the spawn (which returns once the program was
 * exec'd) to its exit as the event loop hears of it, with the CPU time the kernel charged to it and to
 * the descendants it waited for (the harness's own cutime and cstime, which grow when it reaps the
 * trial). Nothing the harness does before or after (cgroups, telemetry, cleanup) is inside it.
 */
export interface ProcessTiming {
  seconds: number;
  /** User and system CPU seconds, to the kernel's clock tick (10 ms); null when /proc cannot tell. */
  userSeconds: number | null;
  systemSeconds: number | null;
}

/** The harness's cutime and cstime (CPU of the children it reaped), in clock ticks; null without /proc. */
export function reapedChildTicks(): { user: number; system: number } | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
    const user = Number(f[13]);
    const system = Number(f[14]);
    return Number.isFinite(user) && Number.isFinite(system) ? { user, system } : null;
  } catch {
    return null;
  }
}

/** A fresh process: the program itself, exec'd under the memory cap's prefix. */
export async function spawnTrial(
  spec: LaunchSpec,
  limit: MemoryLimit,
  env: Record<string, string>,
  cgroup: TrialCgroup | undefined,
): Promise<Launched> {
  const program = [...limit.prefix, ...spec.argv];
  // Behind the join wrapper a missing program would be the shell's exit 127: say it as spawn would.
  if (cgroup) requireProgram(program[0]!, env, spec.cwd);
  // In cgroups the program's environment waits in a file until the wrapper has joined (launch-join.ts).
  const envFile = join(spec.scratchDir, `${spec.attemptId}.env`);
  if (cgroup) writeEnvFile(envFile, { ...process.env, ...env });
  if (cgroup) giveTo(envFile, spec.runAs);
  // Run as another user, the wrapper cannot join root's cgroups: the harness moves it in before its go.
  const readOnly = spec.readOnlyCgroupfs ? readOnlyMounts(cgroup) : undefined;
  const argv = cgroup ? joinArgv(spec.runAs ? [] : cgroup.procsFiles, program, envFile, 3, true, readOnly) : program;
  const streams = openStdio(spec.stdio);
  const options: SpawnOptions = {
    cwd: spec.cwd,
    // The wrapper carries the trial's mark, nothing else of the environment, until it has joined.
    env: cgroup ? { ...WRAPPER_ENV, [MARK_ENV]: env[MARK_ENV] ?? '' } : { ...process.env, ...env },
    detached: true,
    stdio: [...streams.stdio, cgroup ? 'pipe' : 'ignore'],
    ...(spec.runAs ? { uid: spec.runAs.uid, gid: spec.runAs.gid } : {}),
  };
  const ticks0 = reapedChildTicks();
  let t0 = process.hrtime.bigint();
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(argv[0]!, argv.slice(1), options);
  } finally {
    streams.close(); // the child holds its own copies
  }
  let failure: Error | undefined;
  child.on('error', (error) => (failure ??= error));
  // Before the wrapper's word can be heard (and its go sent), it is in its cgroups: nothing of it has run.
  if (cgroup && spec.runAs && child.pid !== undefined) moveInto(cgroup, child.pid, child);
  let timing: ProcessTiming | undefined;
  // The workload's own process ended: its exit status, whatever its pipes still do.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const ticks1 = reapedChildTicks();
      const cpu = (a: number | undefined, b: number | undefined) =>
        a !== undefined && b !== undefined && b >= a ? (b - a) / CLK_TCK : null;
      timing = {
        seconds,
        userSeconds: cpu(ticks0?.user, ticks1?.user),
        systemSeconds: cpu(ticks0?.system, ticks1?.system),
      };
      if (cgroup) rmSync(envFile, { force: true });
      resolve({ code, signal });
    }),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const joinPipe = cgroup ? (child.stdio[3] as Readable | null) : null;
  const joined = cgroup ? joinedSignal(joinPipe) : Promise.resolve(true);
  // In cgroups the window starts when the harness hears that the join wrapper joined, and only then is the
  // wrapper told to exec the program: moving into v1 cgroups costs 10-20 ms here, which is the harness's work,
  // not the program's, and however late the harness hears the word, the program cannot have started yet.
  if (joinPipe) goWhenJoined(joinPipe as Duplex, () => (t0 = process.hrtime.bigint()));
  const stderr = new TailBuffer(STDERR_TAIL_BYTES);
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdout?.on('data', () => undefined); // drained and ignored: stdout is not part of the protocol
  const pid = child.pid;
  if (pid === undefined) {
    const error = failure ?? (await new Promise<Error>((resolve) => child.once('error', resolve)));
    throw new ConfigError(
      `could not start ${JSON.stringify(program[0])}: ${error.message}; check workload.command (and workload.python)`,
    );
  }
  // The wrapper (or the program itself) is the root: every process of the trial starts after it.
  const root = identify(pid);
  if (cgroup && root) cgroup.minStartTicks = root.startTicks;
  return {
    pid,
    root,
    joined,
    exited,
    timing: () => timing,
    settle: async (kill) => {
      // A descendant that escaped into its own session may hold the pipes open: they get a moment,
      // then every process carrying the trial's mark is killed and the pipes are closed.
      const pipesClosed = await Promise.race([
        closed.then(() => true),
        delay(PIPE_GRACE_SECONDS * 1000).then(() => false),
      ]);
      if (pipesClosed) return;
      kill();
      for (const stream of child.stdio) stream?.destroy();
      await closed;
    },
    stderrTail: () => stderr.text(),
    startFailure: (exit, killed) =>
      failure && exit.code === null && exit.signal === null && !killed ? failure.message : undefined,
  };
}

/** The stdin, stdout and stderr of spawn's stdio for `stdio`, with the files it opened (closed once spawned). */
function openStdio(stdio: TrialStdio | undefined): {
  stdio: ('ignore' | 'pipe' | 'inherit' | number)[];
  close: () => void;
} {
  const fds: number[] = [];
  const open = (path: string, flags: 'r' | 'w', field: string) => {
    try {
      const fd = openSync(path, flags);
      fds.push(fd);
      return fd;
    } catch (error) {
      for (const fd of fds) closeSync(fd);
      throw new ConfigError(`${field} ${path}: cannot open it (${(error as Error).message})`, [], { cause: error });
    }
  };
  const out = stdio?.stdout ?? 'pipe';
  return {
    stdio: [
      stdio?.stdin !== undefined ? open(stdio.stdin, 'r', 'workload.stdin') : 'ignore',
      typeof out === 'object' ? open(out.file, 'w', 'workload.stdout') : out === 'null' ? 'ignore' : out,
      stdio?.stderr ?? 'pipe',
    ],
    close: () => fds.forEach((fd) => closeSync(fd)),
  };
}

/** A fork of the warm server: the cap is set in the child (setrlimit, or it joins the cgroup) before the trial. */
export async function forkTrial(
  spec: LaunchSpec,
  limit: MemoryLimit,
  env: Record<string, string>,
  cgroup: TrialCgroup | undefined,
): Promise<Launched> {
  const stderrPath = join(spec.scratchDir, `${spec.attemptId}.stderr`);
  const server = spec.fork!;
  // A fork shares the server's memory (imports, setup()), which a fresh process would hold itself:
  // under a cgroup cap it is charged to the server, so the trial's own cap is lowered by as much.
  const shared = server.memoryBytes();
  if (cgroup && capsTree(limit.mechanism) && limit.bytes !== null && shared !== null) {
    setMemoryLimit(cgroup, Math.max(limit.bytes - shared, MIN_FORK_CAP_BYTES));
  }
  const forked = await server.fork({
    id: spec.trialId,
    argv: spec.argv.slice(1),
    env,
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
    stderrPath,
    memoryBytes: limit.mechanism === 'prlimit-as' ? limit.bytes : null,
    cgroupProcs: cgroup?.procsFiles ?? [],
  });
  if (cgroup) cgroup.minStartTicks = forked.root.startTicks;
  return {
    pid: forked.pid,
    root: forked.root,
    joined: Promise.resolve(true),
    ...(shared !== null ? { sharedBytes: shared } : {}),
    exited: forked.exited,
    settle: async (kill) => kill(),
    stderrTail: () => {
      const text = readTail(stderrPath, STDERR_TAIL_BYTES);
      rmSync(stderrPath, { force: true });
      return text;
    },
    startFailure: () => undefined,
  };
}

/**
 * Throws the error a spawn of `program` would give when it cannot be executed: a path that is not an
 * executable file, or a name found on no directory of the trial's PATH.
 */
function requireProgram(program: string, env: Record<string, string>, cwd: string | undefined): void {
  const candidates = program.includes('/')
    ? [resolve(cwd ?? process.cwd(), program)]
    : (env['PATH'] ?? process.env['PATH'] ?? '')
        .split(delimiter)
        .filter((d) => d !== '')
        .map((d) => resolve(cwd ?? process.cwd(), d, program));
  const runnable = candidates.some((c) => {
    try {
      accessSync(c, constants.X_OK);
      return statSync(c).isFile();
    } catch {
      return false;
    }
  });
  if (!runnable)
    throw new ConfigError(
      `could not start ${JSON.stringify(program)}: ${program.includes('/') ? 'no executable file there' : 'not found on PATH'}; ` +
        'check workload.command (and workload.python)',
    );
}

/** The last `bytes` of a file as text ('' when it does not exist). */
function readTail(path: string, bytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(bytes, size));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    const tail = new TailBuffer(bytes);
    tail.push(buffer);
    return tail.text();
  } finally {
    closeSync(fd);
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** The harness moves a process it just started into the trial's cgroups (limits.user); on failure it is killed. */
function moveInto(cgroup: TrialCgroup, pid: number, child: { kill(signal: NodeJS.Signals): boolean }): void {
  try {
    for (const f of cgroup.procsFiles) writeFileSync(f, String(pid));
  } catch (error) {
    child.kill('SIGKILL');
    throw new TrialError(`could not move the trial's process into its cgroups: ${String(error)}`, { cause: error });
  }
}

/** The cgroup mount points a read-only trial sees read-only; refuses where it cannot be isolated. */
function readOnlyMounts(cgroup: TrialCgroup | undefined): string[] {
  const missing = Object.values(ISOLATION_PROGRAMS).filter((p) => !existsSync(p));
  if (!cgroup || missing.length > 0)
    throw new ConfigError(
      `limits.cgroupfs: read-only needs ${!cgroup ? 'a trial cgroup (tunebench as root, with cgroups it may nest under)' : `${missing.join(' and ')} (util-linux)`}; ` +
        'install util-linux, or remove limits.cgroupfs (or run the workload as another user: limits.user)',
    );
  return cgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8')).map((m) => m.point);
}
