// Runs one trial as a fresh process group: memory cap, timeout with process-tree kill, events and stderr tail.
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, TrialError } from '../errors.js';
import { processTree } from '../telemetry/proc-tree.js';
import { TelemetrySampler } from '../telemetry/sampler.js';
import { ENV, type WorkloadEvent } from '../workloads/protocol/events.js';
import { classify, type Classification } from './classify.js';
import { EventReader } from './event-reader.js';
import { stepEventCount } from './counted-events.js';
import { rankOf } from './ranks.js';
import { cgroupHost } from './cgroup-host.js';
import {
  cgroupMembers,
  cgroupMemory,
  endOrphanedCgroups,
  killTrialCgroup,
  removeTrialCgroup,
  type TrialCgroup,
} from './cgroup.js';
import { capsTree, planLimit, trialCgroup, type MechanismChoice, type MemoryLimit } from './limits.js';
import { forkTrial, spawnTrial, type Launched } from './launch.js';
import { descendantsOf, signalAll, signalGroup, type KnownProcess } from './pids.js';
import { killWarmServers, WarmForkError, type ForkExit, type WarmServer } from './warm-server.js';
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
  /**
   * Ends the trial early, as at `done` (the teardown is not waited for; it counts as exited 0): called
   * after each read of the events file with the events read and the trial's memory as the harness
   * measured it then; returning true stops the trial (a confirmation whose memory has flattened).
   */
  stopWhen?: (update: StopUpdate) => boolean;
  /** Warm start: the trial is a fork of this server instead of a fresh process (argv[0] is not run). */
  fork?: WarmServer;
  /**
   * Ranks the trial runs as (a launcher such as torchrun; default 1). With more than one, `stopAtDone`
   * waits for a `done` from every rank, and an `oom` from any rank stops them all at once.
   */
  ranks?: number;
}

/** What a stop hook sees after each read of the events file. */
export interface StopUpdate {
  /** The events read this time (possibly none), in order. */
  events: readonly WorkloadEvent[];
  /** The trial's memory as the harness measured it at this read. */
  memory: HarnessMemory;
}

/** The trial's memory as the harness sees it: its cgroup's peak usage (when it has one) and the sampled tree RSS peak. */
export interface HarnessMemory {
  cgroupPeakBytes: number | null;
  /** 0 until the first telemetry sample. */
  treeRssPeakBytes: number;
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
  /** Of a fork: the warm server's memory, shared by the trial and counted against its cap. */
  sharedBytes?: number;
  limit: MemoryLimit;
  /** How the trial was contained: its own cgroups, or its process group, descendants and mark. */
  contained: 'cgroup' | 'process-tree';
  aborted: boolean;
  /** 'fork' when the trial was forked from a warm server. */
  launch?: 'fork';
  /** True when the trial was ended by its stopWhen hook (and judged as a clean exit). */
  stoppedEarly?: boolean;
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

/** What the harness knows of a running trial, enough to end it without trusting any pid it did not verify. */
interface Tracked {
  root: KnownProcess | undefined;
  mark: string;
  cgroup: TrialCgroup | undefined;
  server: WarmServer | undefined;
}

/** Trials running now: a second Ctrl-C or a crash of the harness kills them all. */
const active = new Set<Tracked>();

/** Kills the process trees of every trial that is running (SIGKILL), synchronously. */
export function killActiveTrials(): void {
  for (const t of active) endTrial(t, 'SIGKILL');
  killWarmServers();
}

/**
 * The prefix of the marks of one run's trials (from its scratch folder): a resumed run finds what
 * the killed run left behind by it.
 */
export function runMarkPrefix(scratchDir: string): string {
  return `${createHash('sha256').update(resolve(scratchDir)).digest('hex').slice(0, 16)}.`;
}

/**
 * Ends what an earlier, killed harness left of this run's trials: orphaned tunebench cgroups (their
 * owner is dead) and processes carrying one of the run's marks. Returns how many processes it ended.
 */
export function endLeftovers(scratchDir: string): number {
  const marked = markedProcesses(runMarkPrefix(scratchDir), { prefix: true });
  signalAll(marked, 'SIGKILL');
  return endOrphanedCgroups(cgroupHost()) + marked.length;
}

export async function runProcessTrial(spec: ProcessTrialSpec): Promise<ProcessTrialResult> {
  const limit = planLimit(spec.memoryBytes, spec.mechanism);
  mkdirSync(spec.scratchDir, { recursive: true });
  // Each attempt has files of its own: an orphan of a killed earlier attempt cannot write into them.
  const attemptId = `${spec.trialId}.${randomUUID().slice(0, 8)}`;
  const eventsPath = join(spec.scratchDir, `${attemptId}.events.jsonl`);
  const mark = `${runMarkPrefix(spec.scratchDir)}${randomUUID()}`;
  const env = { ...spec.env, [ENV.events]: eventsPath, [ENV.trialId]: spec.trialId, [TRIAL_MARK_ENV]: mark };
  const cgroup = makeCgroup(limit, attemptId);
  const started = process.hrtime.bigint();
  let launched: Launched;
  try {
    const launch = { ...spec, attemptId };
    launched = await (spec.fork ? forkTrial(launch, limit, env, cgroup) : spawnTrial(launch, limit, env, cgroup));
  } catch (error) {
    if (cgroup) removeTrialCgroup(cgroup);
    throw error;
  }
  const { pid, exited } = launched;
  const tracked: Tracked = { root: launched.root, mark, cgroup, server: spec.fork };
  active.add(tracked);
  const end = (signal: NodeJS.Signals): void => void endTrial(tracked, signal);

  const reader = new EventReader(eventsPath, spec.ranks ?? 1);
  const sampler = new TelemetrySampler(pid);
  let timedOut = false;
  let killedByHarness = false;
  let stoppedByUser = false;
  let afterDone = false;
  let endedAtDone = false;
  let endedByHook = false;
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
    end('SIGTERM');
    setTimeout(() => end('SIGKILL'), KILL_GRACE_SECONDS * 1000).unref();
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
        end('SIGKILL');
      }
      if (e.event === 'done' && doneRanks.size >= ranks && spec.stopAtDone && running && !killedByHarness) {
        endedAtDone = true;
        end('SIGKILL');
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
  const hook = (events: WorkloadEvent[]): void => {
    if (!spec.stopWhen || !running || killedByHarness || endedAtDone || endedByHook) return;
    const memory = {
      cgroupPeakBytes: cgroup ? cgroupMemory(cgroup).peakBytes : null,
      treeRssPeakBytes: sampler.peakRss,
    };
    if (spec.stopWhen({ events, memory })) {
      endedByHook = true;
      end('SIGKILL');
    }
  };
  const poller = setInterval(() => {
    try {
      const events = reader.poll();
      take(events);
      hook(events);
    } catch (error) {
      // Never let the reader take the harness down: the trial ends, the run goes on.
      readerError = (error as Error).message;
      clearInterval(poller);
    }
  }, POLL_MS);
  let exit: ForkExit;
  let memory: ReturnType<typeof cgroupMemory> = { peakBytes: null, usageBytes: null, oomKills: 0 };
  let left: number[];
  try {
    sampler.start();
    exit = await exited;
    await launched.settle(() => end('SIGKILL'));
  } finally {
    running = false;
    clearTimeout(timer);
    clearTimeout(doneTimer);
    clearInterval(poller);
    spec.signal?.removeEventListener('abort', onAbort);
    // Whatever happened above, no process of the trial outlives it.
    if (cgroup) memory = cgroupMemory(cgroup);
    left = endTrial(tracked, 'SIGKILL');
    active.delete(tracked);
    if (cgroup) removeTrialCgroup(cgroup);
  }
  const telemetry = sampler.stop();
  try {
    take(reader.finish());
  } catch (error) {
    readerError ??= (error as Error).message;
  }
  rmSync(eventsPath, { force: true });
  if (!(await launched.joined))
    throw new TrialError(
      `the trial could not join its cgroup (${cgroup?.dirs.join(', ')}): the cgroup hierarchy refused the move; ` +
        'set limits.mechanism: prlimit to run without cgroups',
    );
  if (exit.serverGone !== undefined)
    throw new WarmForkError(`the warm server died while trial ${spec.trialId} ran (${exit.serverGone})`);

  const notStarted = launched.startFailure(exit, killedByHarness);
  if (notStarted !== undefined) {
    // The program could not be started at all (ENOENT, EACCES): the experiment names a bad program.
    throw new ConfigError(
      `could not start ${JSON.stringify(spec.argv[0])}: ${notStarted}; check workload.command (and workload.python)`,
    );
  }
  // Stopped at `done` (or by the stop hook) by the harness: judged as the clean exit it was about to make.
  const atHook = endedByHook && !endedAtDone && !timedOut && !stoppedByUser;
  const atDone = (endedAtDone || atHook) && !timedOut && !stoppedByUser;
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
    cgroupOomKills: memory.oomKills,
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
    atHook && 'stopped by the harness when its stop rule was met (the rest of its steps and the teardown are not run)',
    atDone &&
      !atHook &&
      `stopped at its done event${ranks > 1 ? ` from each of its ${ranks} ranks` : ''} ` +
        '(the teardown is not waited for)',
    stoppedAtOom !== undefined && `every rank was stopped at the oom event of rank ${stoppedAtOom}`,
    left.length > 0 &&
      `${left.length} process(es) in the trial's cgroup were not ended (pids ${left.join(', ')}: moved in ` +
        'from outside the trial, or unkillable)',
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
    cgroupPeakBytes: memory.peakBytes,
    ...(launched.sharedBytes !== undefined ? { sharedBytes: launched.sharedBytes } : {}),
    limit,
    contained: cgroup ? 'cgroup' : 'process-tree',
    aborted: stoppedByUser && !timedOut,
    ...(spec.fork ? { launch: 'fork' as const } : {}),
    ...(atHook ? { stoppedEarly: true } : {}),
  };
}

/** The processes whose environment carries the mark (or, with `prefix`, any mark that starts with it). */
export function markedProcesses(mark: string, opts: { prefix?: boolean } = {}): number[] {
  const needle = Buffer.from(`${TRIAL_MARK_ENV}=${mark}${opts.prefix ? '' : '\0'}`);
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
      const environ = readFileSync(`/proc/${entry}/environ`);
      // A variable starts the block or follows a NUL: a value that merely contains the text is not a mark.
      const at = environ.indexOf(needle);
      if (at === 0 || (at > 0 && environ[at - 1] === 0)) out.push(Number(entry));
    } catch {
      // Gone, or another user's process.
    }
  }
  return out;
}

/**
 * Signals every process of a trial: its cgroups' members (SIGKILL empties them), its process group and
 * descendants while its root is the process the harness started, every process carrying its mark, and
 * for a fork what the trial left in the warm server's tree. Returns the pids a cgroup still holds.
 */
function endTrial(t: Tracked, signal: NodeJS.Signals): number[] {
  const minStart = t.root?.startTicks ?? 0;
  if (t.root) {
    const tree = descendantsOf(t.root, processTree);
    signalGroup(t.root, signal);
    signalAll(tree, signal, minStart);
  }
  signalAll(markedProcesses(t.mark), signal, minStart);
  let left: number[] = [];
  if (t.cgroup) {
    if (signal === 'SIGKILL') left = killTrialCgroup(t.cgroup);
    else signalAll(cgroupMembers(t.cgroup), signal, t.cgroup.minStartTicks);
  }
  if (signal === 'SIGKILL' && t.server && t.root) t.server.endStragglers(t.root);
  return left;
}

/** The trial's cgroups; undefined where none can be made (then a cgroup mechanism is an error). */
function makeCgroup(limit: MemoryLimit, label: string): TrialCgroup | undefined {
  try {
    return trialCgroup(limit, label);
  } catch (error) {
    if (!capsTree(limit.mechanism)) return undefined; // contained by the process tree and the mark instead
    throw new TrialError(`could not make the trial's cgroup: ${String(error)}`, { cause: error });
  }
}
