// How a trial's process starts: spawned afresh (under the cap's prefix), or forked from a warm server
// (the cap set in the child). Both give the same handle to the code that watches the trial.
import { closeSync, fstatSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { ConfigError } from '../errors.js';
import { prepareCgroup, type MemoryLimit } from './limits.js';
import { TailBuffer } from './tail.js';
import type { WarmServer } from './warm-server.js';

/**
 * Seconds the workload's pipes may stay open after its process exited (a descendant that escaped
 * into its own session holds them) before the harness closes them and kills that descendant.
 */
export const PIPE_GRACE_SECONDS = 1;
export const STDERR_TAIL_BYTES = 8 * 1024;

/** What launching needs of the trial's spec. */
export interface LaunchSpec {
  argv: readonly string[];
  cwd?: string;
  scratchDir: string;
  trialId: string;
  fork?: WarmServer;
}

export interface Launched {
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** After the exit: waits for the output to be complete; `kill` ends what still holds it. */
  settle(kill: () => void): Promise<void>;
  stderrTail(): string;
  /** Why the program never started, or undefined when it ran. */
  startFailure(exit: { code: number | null; signal: string | null }, killed: boolean): string | undefined;
}

/** A fresh process: the program itself, exec'd under the memory cap's prefix. */
export async function spawnTrial(spec: LaunchSpec, limit: MemoryLimit, env: Record<string, string>): Promise<Launched> {
  const argv = [...limit.prefix, ...spec.argv];
  const child = execa(argv[0]!, argv.slice(1), {
    cwd: spec.cwd,
    env,
    extendEnv: true,
    detached: true,
    reject: false,
    buffer: false,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const stderr = new TailBuffer(STDERR_TAIL_BYTES);
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdout?.on('data', () => undefined); // drained and ignored: stdout is not part of the protocol
  const pid = child.pid;
  if (pid === undefined) {
    const r = await child;
    throw new ConfigError(
      `could not start ${JSON.stringify(argv[0])}: ${r.shortMessage ?? r.message}; ` +
        'check workload.command (and workload.python)',
    );
  }
  let result: Awaited<typeof child> | undefined;
  return {
    pid,
    // The workload's own process ended: its exit status, whatever its pipes still do.
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
    settle: async (kill) => {
      // A descendant that escaped into its own session may hold the pipes open: they get a moment,
      // then every process carrying the trial's mark is killed and the pipes are closed.
      const pipesClosed = await Promise.race([
        child.then(() => true),
        delay(PIPE_GRACE_SECONDS * 1000).then(() => false),
      ]);
      kill();
      if (!pipesClosed) {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }
      result = await child;
    },
    stderrTail: () => stderr.text(),
    startFailure: (exit, killed) =>
      result?.failed && exit.code === null && exit.signal === null && !killed
        ? (result.shortMessage ?? result.message)
        : undefined,
  };
}

/** A fork of the warm server: the cap is set in the child (setrlimit, or it joins the cgroup) before the trial. */
export async function forkTrial(spec: LaunchSpec, limit: MemoryLimit, env: Record<string, string>): Promise<Launched> {
  const stderrPath = join(spec.scratchDir, `${spec.trialId}.stderr`);
  const forked = await spec.fork!.fork({
    id: spec.trialId,
    argv: spec.argv.slice(1),
    env,
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
    stderrPath,
    memoryBytes: limit.mechanism === 'prlimit-as' ? limit.bytes : null,
    cgroupProcs: prepareCgroup(limit),
  });
  return {
    pid: forked.pid,
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
