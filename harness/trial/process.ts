// Runs one trial as a fresh process group: memory cap, timeout with process-tree kill, events and stderr tail.
import { randomUUID } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { ConfigError, TrialError } from '../errors.js';
import { processTree } from '../telemetry/proc-tree.js';
import { TelemetrySampler } from '../telemetry/sampler.js';
import { ENV, type WorkloadEvent } from '../workloads/protocol/events.js';
import { classify, type Classification } from './classify.js';
import { EventReader } from './event-reader.js';
import {
  enterCgroup,
  leaveCgroup,
  planLimit,
  prepareCgroup,
  type MechanismChoice,
  type MemoryLimit,
} from './limits.js';
import { TailBuffer } from './tail.js';
import { killWarmServers, type WarmServer } from './warm-server.js';
import type { Telemetry } from '../domain/index.js';

export interface ProcessTrialSpec {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  timeoutSeconds: number;
  memoryBytes?: number;
  mechanism: MechanismChoice;
  /** Whether exiting 0 without step events is `invalid` (true for tunebench's own workloads). */
  eventsRequired: boolean;
  /** Scratch directory for the events file; removed afterwards. */
  scratchDir: string;
  trialId: string;
  onEvent?: (event: WorkloadEvent) => void;
  /** Aborting stops the trial (SIGTERM, then SIGKILL) without classifying it as a timeout. */
  signal?: AbortSignal;
  /** Seconds between `done` and a forced end (default DONE_GRACE_SECONDS). */
  doneGraceSeconds?: number;
  /**
   * End the trial at its `done` event: the steps and memory are in, so the teardown (freeing
   * memory, joining workers, interpreter exit) is not waited for. The trial counts as exited 0.
   */
  stopAtDone?: boolean;
  /** Warm start: the trial is a fork of this server instead of a fresh process (argv[0] is not run). */
  fork?: WarmServer;
}

export interface ProcessTrialResult extends Classification {
  events: WorkloadEvent[];
  malformedEvents: number;
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
  wallSeconds: number;
  peakTreeRssBytes: number;
  telemetry: Telemetry;
  cgroupPeakBytes: number | null;
  limit: MemoryLimit;
  aborted: boolean;
  /** 'fork' when the trial was forked from a warm server. */
  launch?: 'fork';
}

/** Seconds between SIGTERM and SIGKILL when a trial is stopped. */
export const KILL_GRACE_SECONDS = 2;
/**
 * Seconds the workload's pipes may stay open after its process exited (a descendant that escaped
 * into its own session holds them) before the harness closes them and kills that descendant.
 */
export const PIPE_GRACE_SECONDS = 1;
/** Seconds between a workload's `done` event and its exit (teardown) before it is killed; the trial stays ok. */
export const DONE_GRACE_SECONDS = 10;
/**
 * Every process of a trial inherits this variable with the trial's own token, so a descendant that
 * left the trial's process group and tree (setsid, a double fork, a daemon) is still found and killed.
 */
export const TRIAL_MARK_ENV = 'TUNEBENCH_TRIAL_MARK';
const POLL_MS = 200;
const STDERR_TAIL_BYTES = 8 * 1024;

/** Trials running now (root pid -> mark): a second Ctrl-C or a crash of the harness kills them all. */
const active = new Map<number, string>();

/** Kills the process trees of every trial that is running (SIGKILL), synchronously. */
export function killActiveTrials(): void {
  for (const [pid, mark] of active) killTrial(pid, mark, 'SIGKILL');
  killWarmServers();
}

export async function runProcessTrial(spec: ProcessTrialSpec): Promise<ProcessTrialResult> {
  const limit = planLimit(spec.memoryBytes, spec.mechanism, spec.trialId);
  mkdirSync(spec.scratchDir, { recursive: true });
  const eventsPath = join(spec.scratchDir, `${spec.trialId}.events.jsonl`);
  rmSync(eventsPath, { force: true });
  const mark = randomUUID();
  const env = { ...spec.env, [ENV.events]: eventsPath, [ENV.trialId]: spec.trialId, [TRIAL_MARK_ENV]: mark };
  const started = process.hrtime.bigint();
  const launched = await (spec.fork ? forkTrial(spec, limit, env) : spawnTrial(spec, limit, env));
  const { pid, exited } = launched;
  active.set(pid, mark);
  if (!spec.fork) {
    try {
      enterCgroup(limit, pid);
    } catch (error) {
      killTrial(pid, mark, 'SIGKILL');
      active.delete(pid);
      throw new TrialError(`could not place the trial in cgroup ${limit.cgroupDir}: ${String(error)}`, {
        cause: error,
      });
    }
  }

  const reader = new EventReader(eventsPath);
  const sampler = new TelemetrySampler(pid);
  let timedOut = false;
  let killedByHarness = false;
  let stoppedByUser = false;
  let afterDone = false;
  let endedAtDone = false;
  let doneTimer: NodeJS.Timeout | undefined;
  let readerError: string | null = null;
  /** Cleared when the workload's process is gone: events read after that arm no timer. */
  let running = true;
  const stop = (): void => {
    killedByHarness = true;
    killTrial(pid, mark, 'SIGTERM');
    setTimeout(() => killTrial(pid, mark, 'SIGKILL'), KILL_GRACE_SECONDS * 1000).unref();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, spec.timeoutSeconds * 1000);
  const onAbort = (): void => {
    stoppedByUser = true;
    stop();
  };
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  const take = (events: WorkloadEvent[]): void => {
    for (const e of events) {
      spec.onEvent?.(e);
      if (e.event === 'done' && spec.stopAtDone && running && !killedByHarness) {
        endedAtDone = true;
        killTrial(pid, mark, 'SIGKILL');
      }
      // `done` ends the measurement: a teardown that hangs is cut short, and the steps are kept.
      if (e.event === 'done' && doneTimer === undefined && running) {
        doneTimer = setTimeout(
          () => {
            afterDone = true;
            stop();
          },
          (spec.doneGraceSeconds ?? DONE_GRACE_SECONDS) * 1000,
        );
        // The trial's own process keeps the harness alive while it runs; this timer must not.
        doneTimer.unref();
      }
    }
  };
  const poller = setInterval(() => {
    try {
      take(reader.poll());
    } catch (error) {
      // Never let the reader take the harness down: the trial ends, the run goes on.
      readerError = (error as Error).message;
      clearInterval(poller);
    }
  }, POLL_MS);
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    sampler.start();
    exit = await exited;
    await launched.settle(() => killTrial(pid, mark, 'SIGKILL'));
  } finally {
    running = false;
    clearTimeout(timer);
    clearTimeout(doneTimer);
    clearInterval(poller);
    spec.signal?.removeEventListener('abort', onAbort);
    // Whatever happened above, no process of the trial outlives it.
    killTrial(pid, mark, 'SIGKILL');
    active.delete(pid);
  }
  const telemetry = sampler.stop();
  try {
    take(reader.finish());
  } catch (error) {
    readerError ??= (error as Error).message;
  }
  const cgroup = leaveCgroup(limit);
  rmSync(eventsPath, { force: true });

  const notStarted = launched.startFailure(exit, killedByHarness);
  if (notStarted !== undefined) {
    // The program could not be started at all (ENOENT, EACCES): the experiment names a bad program.
    throw new ConfigError(
      `could not start ${JSON.stringify(spec.argv[0])}: ${notStarted}; check workload.command (and workload.python)`,
    );
  }
  // Stopped at `done` by the harness: judged as the clean exit it was about to make.
  const atDone = endedAtDone && !timedOut && !stoppedByUser;
  const exitCode = atDone ? 0 : exit.code;
  const signal = atDone ? null : exit.signal;
  const stderrTail = launched.stderrTail();
  const steps = reader.events.filter((e) => e.event === 'step').length;
  let classification = classify({
    events: reader.events,
    exitCode,
    signal,
    timedOut,
    killedByHarness,
    cgroupOomKills: cgroup.oomKills,
    stderr: stderrTail,
    eventsRequired: spec.eventsRequired,
    malformedEvents: reader.malformed,
  });
  if (afterDone && !timedOut && !stoppedByUser && classification.outcome !== 'oom' && steps > 0) {
    classification = {
      outcome: 'ok',
      reason:
        `reported done after ${steps} step event(s), then did not exit within ` +
        `${spec.doneGraceSeconds ?? DONE_GRACE_SECONDS} s (a hanging teardown); killed, and its steps are kept`,
    };
  }
  const problems = [
    reader.problem,
    readerError && `reading the events file failed: ${readerError}`,
    classification.outcome === 'ok' && reader.malformed > 0 && `${reader.malformed} malformed event line(s) ignored`,
    atDone && 'stopped at its done event (the teardown is not waited for)',
  ].filter((x): x is string => typeof x === 'string' && x.length > 0);
  if (problems.length > 0)
    classification = { ...classification, reason: `${classification.reason}; ${problems.join('; ')}` };
  return {
    ...classification,
    events: reader.events,
    malformedEvents: reader.malformed,
    exitCode,
    signal,
    stderrTail,
    wallSeconds: Number(process.hrtime.bigint() - started) / 1e9,
    peakTreeRssBytes: sampler.peakRss,
    telemetry,
    cgroupPeakBytes: cgroup.peakBytes,
    limit,
    aborted: stoppedByUser && !timedOut,
    ...(spec.fork ? { launch: 'fork' as const } : {}),
  };
}

interface Launched {
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** After the exit: waits for the output to be complete; `kill` ends what still holds it. */
  settle(kill: () => void): Promise<void>;
  stderrTail(): string;
  /** Why the program never started, or undefined when it ran. */
  startFailure(exit: { code: number | null; signal: string | null }, killed: boolean): string | undefined;
}

/** A fresh process: the program itself, exec'd under the memory cap's prefix. */
async function spawnTrial(spec: ProcessTrialSpec, limit: MemoryLimit, env: Record<string, string>): Promise<Launched> {
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
async function forkTrial(spec: ProcessTrialSpec, limit: MemoryLimit, env: Record<string, string>): Promise<Launched> {
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

/** The processes whose environment carries the trial's mark (they may have left its group and tree). */
export function markedProcesses(mark: string): number[] {
  const needle = Buffer.from(`${TRIAL_MARK_ENV}=${mark}\0`);
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(needle)) out.push(Number(entry));
    } catch {
      // Gone, or another user's process.
    }
  }
  return out;
}

/** Signals the trial's process group, its descendants, and every process that carries its mark. */
export function killTrial(pid: number, mark: string, signal: NodeJS.Signals): void {
  killTree(pid, signal);
  for (const p of markedProcesses(mark)) {
    try {
      process.kill(p, signal);
    } catch {
      // Exited meanwhile.
    }
  }
}

/** Signals the process group and every descendant found in /proc (some may have left the group). */
export function killTree(pid: number, signal: NodeJS.Signals): void {
  let tree: number[];
  try {
    tree = processTree(pid);
  } catch {
    tree = [pid];
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
  for (const p of tree) {
    try {
      process.kill(p, signal);
    } catch {
      // Exited meanwhile.
    }
  }
}
