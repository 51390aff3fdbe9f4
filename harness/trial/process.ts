// Runs one trial as a fresh process group: memory cap, timeout with process-tree kill, events and stderr tail.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, TrialError } from '../errors.js';
import { processTree } from '../telemetry/proc-tree.js';
import { TelemetrySampler } from '../telemetry/sampler.js';
import { ENV, type WorkloadEvent } from '../workloads/protocol/events.js';
import { classify, type Classification } from './classify.js';
import { EventReader } from './event-reader.js';
import { stepEventCount } from './counted-events.js';
import { rankOf } from './ranks.js';
import { enterCgroup, leaveCgroup, planLimit, type MechanismChoice, type MemoryLimit } from './limits.js';
import { forkTrial, spawnTrial } from './launch.js';
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
  /**
   * Ranks the trial runs as (a launcher such as torchrun; default 1). With more than one, `stopAtDone`
   * waits for a `done` from every rank, and an `oom` from any rank stops them all at once.
   */
  ranks?: number;
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
export { PIPE_GRACE_SECONDS } from './launch.js';
/** Seconds between a workload's `done` event and its exit (teardown) before it is killed; the trial stays ok. */
export const DONE_GRACE_SECONDS = 10;
/**
 * Every process of a trial inherits this variable with the trial's own token, so a descendant that
 * left the trial's process group and tree (setsid, a double fork, a daemon) is still found and killed.
 */
export const TRIAL_MARK_ENV = 'TUNEBENCH_TRIAL_MARK';
const POLL_MS = 200;

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

  const reader = new EventReader(eventsPath, spec.ranks ?? 1);
  const sampler = new TelemetrySampler(pid);
  let timedOut = false;
  let killedByHarness = false;
  let stoppedByUser = false;
  let afterDone = false;
  let endedAtDone = false;
  /** The rank whose oom event stopped a multi-rank trial. */
  let stoppedAtOom: number | undefined;
  const ranks = spec.ranks ?? 1;
  const doneRanks = new Set<number>();
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
      if (e.event === 'done') doneRanks.add(ranks > 1 ? rankOf(e) : 0);
      // One rank out of memory fails the trial: the others would wait for it in a collective.
      if (e.event === 'oom' && ranks > 1 && running && !killedByHarness) {
        stoppedAtOom = rankOf(e);
        killedByHarness = true;
        killTrial(pid, mark, 'SIGKILL');
      }
      if (e.event === 'done' && doneRanks.size >= ranks && spec.stopAtDone && running && !killedByHarness) {
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
  const steps = stepEventCount(reader.events);
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
    atDone &&
      `stopped at its done event${ranks > 1 ? ` from each of its ${ranks} ranks` : ''} ` +
        '(the teardown is not waited for)',
    stoppedAtOom !== undefined && `every rank was stopped at the oom event of rank ${stoppedAtOom}`,
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
