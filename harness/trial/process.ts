// Runs one trial as a fresh process group: memory cap, timeout with process-tree kill, events and stderr tail.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, TrialError } from '../errors.js';
import { processTree } from '../telemetry/proc-tree.js';
import { TelemetrySampler } from '../telemetry/sampler.js';
import { ENV, type WorkloadEvent } from '../workloads/protocol/events.js';
import { classify, type Classification } from './classify.js';
import { EventReader } from './event-reader.js';
import { stepEventCount } from './counted-events.js';
import { rankOf } from './ranks.js';
import { cgroupHost } from './cgroup-host.js';
import { freeBytes, MIN_FREE_BYTES } from '../store/atomic.js';
import { formatBytes } from '../experiment/units.js';
import { giveTo, type RunAs } from './run-as.js';
import { confirmedOutside, limitChanged, outsideCgroups, peakOverCap } from './integrity.js';
import { ownerState, ownerTag, parseOwner, scopeOf, selfOwner, type Owner } from './owner.js';
import {
  cgroupMembers,
  cgroupMemory,
  endOrphanedCgroups,
  killTrialCgroup,
  pidsLimitHits,
  removeTrialCgroup,
  type TrialCgroup,
} from './cgroup.js';
import { capsTree, planLimit, trialCgroup, type CudaUse, type MechanismChoice, type MemoryLimit } from './limits.js';
import { forkTrial, spawnTrial, type Launched, type LaunchSpec, type ProcessTiming } from './launch.js';
import { descendantsOf, signalAll, signalGroup, type KnownProcess } from './pids.js';
import { killWarmServers, WarmForkError, type ForkExit, type WarmServer } from './warm-server.js';
import type { EndedBy, Telemetry } from '../domain/index.js';

export interface ProcessTrialSpec {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  timeoutSeconds: number;
  memoryBytes?: number;
  mechanism: MechanismChoice;
  /** Whether the program may start CUDA: it never gets an address-space cap (trial/limits.ts). */
  cuda?: CudaUse;
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
  /** A fresh process's standard streams (launch.ts); absent: stdin none, stdout drained, stderr's tail kept. */
  stdio?: LaunchSpec['stdio'];
  /**
   * Ranks the trial runs as (a launcher such as torchrun; default 1). With more than one, `stopAtDone`
   * waits for a `done` from every rank, and an `oom` from any rank stops them all at once.
   */
  ranks?: number;
  /** limits.user: the trial runs as this user (run-as.ts), moved into its cgroups by the harness. */
  runAs?: RunAs;
  /** limits.pids (or the default): most processes and threads of the trial at once (a pids cgroup). */
  pids?: number;
  /** limits.cgroupfs: read-only: the program runs in namespaces where the cgroup filesystem is read-only. */
  readOnlyCgroupfs?: true;
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

export interface TrialClock {
  launchMs: number;
  startedMs: number;
  exitMs: number;
  endMs: number;
}

export interface ProcessTrialResult extends Classification {
  events: WorkloadEvent[];
  malformedEvents: number;
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
  /** From before the launch to after the cleanup: what the trial cost the harness. */
  wallSeconds: number;
  /** Unix ms of the harness's moments: before the launch, process started, exit seen, cleanup done (the timeline). */
  clock: TrialClock;
  /** Of a fresh process: the timed window from its exec to its exit, and its CPU time. */
  timing?: ProcessTiming;
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
  /** Who ended the trial, and why. */
  endedBy: EndedBy;
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

/** What a run found of its directory's earlier trials when it started (see endLeftovers). */
export interface Leftovers {
  /** Processes ended: they belonged to this directory's trials, started by a harness that is provably dead. */
  ended: number;
  /** Other harnesses of this directory that still run trials (its lock was removed): nothing of theirs is touched. */
  live: Owner[];
  /** Cgroups of this directory whose owner runs in another PID namespace: left alone. */
  unknown: string[];
}

/**
 * Ends what an earlier, killed harness left of this run directory's trials: its trial cgroups and the
 * processes carrying its marks, only where the owner written into them (owner.ts) is this directory's
 * and provably dead. Another directory's trials, a live harness's, or one in another PID namespace are
 * never ended; the live ones are returned, so that the run can refuse to write beside them.
 */
export function endLeftovers(scratchDir: string): Leftovers {
  const scope = scopeOf(scratchDir);
  const live = new Map<string, Owner>();
  let ended = 0;
  for (const { pid, mark } of markedProcessesWithMarks(`${scope}.`)) {
    const owner = parseOwner(mark);
    const state = owner ? ownerState(owner) : 'unknown';
    if (owner && state === 'alive') live.set(ownerTag(owner), owner);
    if (state === 'dead') ended += signalAll([pid], 'SIGKILL');
  }
  const cgroups = endOrphanedCgroups(cgroupHost(), scope);
  for (const o of cgroups.live) live.set(ownerTag(o), o);
  return { ended: ended + cgroups.killed, live: [...live.values()], unknown: cgroups.unknown };
}

/** A launched trial: its files, its cgroup, the process the harness started and how it is tracked. */
interface StartedTrial {
  limit: MemoryLimit;
  eventsPath: string;
  cgroup: TrialCgroup | undefined;
  /** hrtime at the launch, for the trial's wall time. */
  started: bigint;
  /** Unix ms before the launch and once the process was started (spawned, or forked and verified). */
  launchMs: number;
  startedMs: number;
  launched: Launched;
  tracked: Tracked;
}

/** What the watch of a running trial learns: set by its timers, its events, its stop hook and the user's abort. */
interface WatchState {
  timedOut: boolean;
  killedByHarness: boolean;
  stoppedByUser: boolean;
  afterDone: boolean;
  endedAtDone: boolean;
  endedByHook: boolean;
  /** The rank whose oom event stopped a multi-rank trial. */
  stoppedAtOom: number | undefined;
  doneRanks: Set<number>;
  doneTimer: NodeJS.Timeout | undefined;
  readerError: string | null;
  /** Cleared when the workload's process is gone: events read after that arm no timer. */
  running: boolean;
  /** How the trial broke out of its limits (integrity.ts): it is ended, and invalid. */
  tampered?: string;
  /** What the last integrity check saw of the trial's first process outside its cgroups (seen twice: broke out). */
  outside?: string | undefined;
}

/** A running trial as its watch sees it. */
interface Watch {
  spec: ProcessTrialSpec;
  ranks: number;
  cgroup: TrialCgroup | undefined;
  reader: EventReader;
  sampler: TelemetrySampler;
  state: WatchState;
  /** Signals every process of the trial. */
  end: (signal: NodeJS.Signals) => void;
  /** The trial's first process, which must stay in its cgroups. */
  rootPid: number | undefined;
}

/** A trial after its last process is gone: what was read, sampled and measured of it. */
interface WatchedTrial {
  state: WatchState;
  reader: EventReader;
  sampler: TelemetrySampler;
  telemetry: Telemetry;
  exit: ForkExit;
  /** Unix ms when the trial's process was seen to exit. */
  exitMs: number;
  memory: ReturnType<typeof cgroupMemory>;
  /** The pids its cgroup still held after the final SIGKILL. */
  left: number[];
  /** Forks and clones refused at the trial's pids.max. */
  pidsHits: number;
  /** The disk of the trial's files was full when it ended (its events file may be what filled it). */
  diskFull?: { freeBytes: number; eventsBytes: number };
}

/** How the trial is judged: its classification and the exit it counts as. */
interface Judgement {
  classification: Classification;
  /** Who ended the trial, and why: one fact instead of the watch's flags. */
  endedBy: EndedBy;
  /** Ended by its stop hook, judged as a clean exit. */
  atHook: boolean;
  /** Ended at `done` or by its stop hook, judged as a clean exit. */
  atDone: boolean;
  exitCode: number | null;
  signal: ForkExit['signal'];
  stderrTail: string;
}

export async function runProcessTrial(spec: ProcessTrialSpec): Promise<ProcessTrialResult> {
  const started = await startTrial(spec);
  const watched = await watchTrial(spec, started);
  await checkLaunch(spec, started, watched);
  const judgement = judgeTrial(spec, started, watched);
  return trialResult({ spec, started, watched, judgement });
}

/** Launches the trial in its cgroup (when one can be made) and tracks it so that a harness crash ends it. */
async function startTrial(spec: ProcessTrialSpec): Promise<StartedTrial> {
  const limit = planLimit(spec.memoryBytes, spec.mechanism, undefined, spec.cuda);
  mkdirSync(spec.scratchDir, { recursive: true });
  // Each attempt has files of its own: an orphan of a killed earlier attempt cannot write into them.
  const attemptId = `${spec.trialId}.${randomUUID().slice(0, 8)}`;
  const eventsPath = join(spec.scratchDir, `${attemptId}.events.jsonl`);
  // Run as another user, the trial appends to a file the harness made and gave it (it cannot create files here).
  if (spec.runAs) {
    writeFileSync(eventsPath, '', { mode: 0o600 });
    giveTo(eventsPath, spec.runAs);
  }
  // The owner (this run directory and this harness) names the cgroups and starts the mark (owner.ts).
  const owner = selfOwner(scopeOf(spec.scratchDir));
  const mark = `${ownerTag(owner)}.${randomUUID()}`;
  const env = {
    ...spec.env,
    ...(spec.runAs ? { HOME: spec.runAs.home, USER: spec.runAs.name, LOGNAME: spec.runAs.name } : {}),
    [ENV.events]: eventsPath,
    [ENV.trialId]: spec.trialId,
    [TRIAL_MARK_ENV]: mark,
  };
  const launchMs = Date.now();
  const cgroup = makeCgroup(limit, owner, attemptId, spec.pids);
  const started = process.hrtime.bigint();
  let launched: Launched;
  try {
    const launch = { ...spec, attemptId };
    launched = await (spec.fork ? forkTrial(launch, limit, env, cgroup) : spawnTrial(launch, limit, env, cgroup));
  } catch (error) {
    if (cgroup) removeTrialCgroup(cgroup);
    throw error;
  }
  const tracked: Tracked = { root: launched.root, mark, cgroup, server: spec.fork };
  active.add(tracked);
  return { limit, eventsPath, cgroup, started, launchMs, startedMs: Date.now(), launched, tracked };
}

/**
 * Watches the trial until its process is gone (timeout, abort, events, stop hook), then ends every process
 * it left, removes its cgroup and reads the rest of its events.
 */
async function watchTrial(spec: ProcessTrialSpec, started: StartedTrial): Promise<WatchedTrial> {
  const { launched, tracked, cgroup } = started;
  const end = (signal: NodeJS.Signals): void => void endTrial(tracked, signal);
  const w: Watch = {
    spec,
    ranks: spec.ranks ?? 1,
    cgroup,
    reader: new EventReader(started.eventsPath, spec.ranks ?? 1),
    sampler: new TelemetrySampler(launched.pid),
    state: {
      timedOut: false,
      killedByHarness: false,
      stoppedByUser: false,
      afterDone: false,
      endedAtDone: false,
      endedByHook: false,
      stoppedAtOom: undefined,
      doneRanks: new Set<number>(),
      doneTimer: undefined,
      readerError: null,
      running: true,
    },
    end,
    rootPid: launched.root?.pid,
  };
  const { state, reader, sampler } = w;
  const timer = setTimeout(() => {
    state.timedOut = true;
    stopTrial(w);
  }, spec.timeoutSeconds * 1000);
  const onAbort = (): void => {
    state.stoppedByUser = true;
    stopTrial(w);
  };
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  const poller = pollEvents(w);
  let exit: ForkExit;
  let exitMs: number;
  let memory: ReturnType<typeof cgroupMemory> = { peakBytes: null, usageBytes: null, oomKills: 0 };
  let left: number[];
  let pidsHits = 0;
  try {
    sampler.start();
    exit = await launched.exited;
    exitMs = Date.now();
    await launched.settle(() => end('SIGKILL'));
  } finally {
    state.running = false;
    clearTimeout(timer);
    clearTimeout(state.doneTimer);
    clearInterval(poller);
    spec.signal?.removeEventListener('abort', onAbort);
    // Whatever happened above, no process of the trial outlives it.
    if (cgroup) memory = cgroupMemory(cgroup);
    if (cgroup) state.tampered ??= finalIntegrity(cgroup, tracked.mark, memory.peakBytes);
    if (cgroup) pidsHits = pidsLimitHits(cgroup);
    left = endTrial(tracked, 'SIGKILL');
    active.delete(tracked);
    if (cgroup) removeTrialCgroup(cgroup);
  }
  const telemetry = sampler.stop();
  try {
    takeEvents(w, reader.finish());
  } catch (error) {
    state.readerError ??= (error as Error).message;
  }
  // Read before the events file goes: once it is removed, a disk it filled has room again.
  const diskFull = fullDisk(spec.scratchDir, started.eventsPath);
  rmSync(started.eventsPath, { force: true });
  return { state, reader, sampler, telemetry, exit, exitMs, memory, left, pidsHits, ...(diskFull ? { diskFull } : {}) };
}

/** Stops the trial: SIGTERM, then SIGKILL after the grace. */
function stopTrial(w: Watch): void {
  w.state.killedByHarness = true;
  w.end('SIGTERM');
  setTimeout(() => w.end('SIGKILL'), KILL_GRACE_SECONDS * 1000).unref();
}

/**
 * Checks while the trial runs that it stays in its limits (integrity.ts); a trial that broke out is ended
 * at once (it is no longer contained) and judged invalid.
 */
function checkIntegrity(w: Watch): void {
  const { cgroup, state } = w;
  if (!cgroup || state.tampered !== undefined || !state.running) return;
  const outside = w.rootPid !== undefined ? outsideCgroups(cgroup, w.rootPid) : undefined;
  // Outside twice in a row (a poll apart): a process on its way out passes through the root cgroup once.
  const broke = limitChanged(cgroup) ?? (outside !== undefined && outside === state.outside ? outside : undefined);
  state.outside = outside;
  if (broke === undefined) return;
  state.tampered = broke;
  state.killedByHarness = true;
  w.end('SIGKILL');
}

/** After the trial: its cap as written, no process of its mark outside its cgroups, its peak within the cap. */
function finalIntegrity(cgroup: TrialCgroup, mark: string, peakBytes: number | null): string | undefined {
  const escaped = markedProcesses(mark)
    .map((pid) => confirmedOutside(cgroup, pid))
    .find((why) => why !== undefined);
  return limitChanged(cgroup) ?? escaped ?? peakOverCap(cgroup, peakBytes);
}

/** Reads the events file every POLL_MS while the trial runs. */
function pollEvents(w: Watch): NodeJS.Timeout {
  const poller = setInterval(() => {
    checkIntegrity(w);
    try {
      const events = w.reader.poll();
      takeEvents(w, events);
      runStopHook(w, events);
    } catch (error) {
      // Never let the reader take the harness down: the trial ends, the run goes on.
      w.state.readerError = (error as Error).message;
      clearInterval(poller);
    }
  }, POLL_MS);
  return poller;
}

/** Passes the events on and acts on them: an oom of one of several ranks, `done` (stop, or arm the grace). */
function takeEvents(w: Watch, events: WorkloadEvent[]): void {
  const { spec, ranks, state } = w;
  for (const e of events) {
    spec.onEvent?.(e);
    if (e.event === 'done') state.doneRanks.add(ranks > 1 ? rankOf(e) : 0);
    // One rank out of memory fails the trial: the others would wait for it in a collective.
    if (e.event === 'oom' && ranks > 1 && state.running && !state.killedByHarness) {
      state.stoppedAtOom = rankOf(e);
      state.killedByHarness = true;
      w.end('SIGKILL');
    }
    if (
      e.event === 'done' &&
      state.doneRanks.size >= ranks &&
      spec.stopAtDone &&
      state.running &&
      !state.killedByHarness
    ) {
      state.endedAtDone = true;
      w.end('SIGKILL');
    }
    // `done` ends the measurement: a teardown that hangs is cut short, and the steps are kept.
    if (e.event === 'done' && state.doneTimer === undefined && state.running) {
      state.doneTimer = setTimeout(
        () => {
          state.afterDone = true;
          stopTrial(w);
        },
        (spec.doneGraceSeconds ?? DONE_GRACE_SECONDS) * 1000,
      );
      // The trial's own process keeps the harness alive while it runs; this timer must not.
      state.doneTimer.unref();
    }
  }
}

/** Asks the spec's stop hook whether the trial has what it needs; ends it when it has. */
function runStopHook(w: Watch, events: WorkloadEvent[]): void {
  const { spec, state } = w;
  if (!spec.stopWhen || !state.running || state.killedByHarness || state.endedAtDone || state.endedByHook) return;
  const memory = {
    cgroupPeakBytes: w.cgroup ? cgroupMemory(w.cgroup).peakBytes : null,
    treeRssPeakBytes: w.sampler.peakRss,
  };
  if (spec.stopWhen({ events, memory })) {
    state.endedByHook = true;
    w.end('SIGKILL');
  }
}

/** Throws for what is not the trial's outcome: a failed cgroup join, a dead warm server, a program that never started. */
async function checkLaunch(spec: ProcessTrialSpec, started: StartedTrial, watched: WatchedTrial): Promise<void> {
  const { launched, cgroup } = started;
  const { exit } = watched;
  if (!(await launched.joined))
    throw new TrialError(
      `the trial could not join its cgroup (${cgroup?.dirs.join(', ')}): the cgroup hierarchy refused the move; ` +
        'set limits.mechanism: prlimit to run without cgroups',
    );
  if (exit.serverGone !== undefined)
    throw new WarmForkError(`the warm server died while trial ${spec.trialId} ran (${exit.serverGone})`);

  const notStarted = launched.startFailure(exit, watched.state.killedByHarness);
  if (notStarted !== undefined) {
    // The program could not be started at all (ENOENT, EACCES): the experiment names a bad program.
    throw new ConfigError(
      `could not start ${JSON.stringify(spec.argv[0])}: ${notStarted}; check workload.command (and workload.python)`,
    );
  }
}

/** Classifies the trial from its exit, events and memory, with the problems met on the way in its reason. */
function judgeTrial(spec: ProcessTrialSpec, started: StartedTrial, watched: WatchedTrial): Judgement {
  const { state, reader, memory } = watched;
  const { timedOut, stoppedByUser } = state;
  // Stopped at `done` (or by the stop hook) by the harness: judged as the clean exit it was about to make.
  const atHook = state.endedByHook && !state.endedAtDone && !timedOut && !stoppedByUser;
  const atDone = (state.endedAtDone || atHook) && !timedOut && !stoppedByUser;
  const exitCode = atDone ? 0 : watched.exit.code;
  const signal = atDone ? null : watched.exit.signal;
  const stderrTail = started.launched.stderrTail();
  const steps = stepEventCount(reader.events);
  let classification = classify({
    events: reader.events,
    exitCode,
    signal,
    timedOut,
    killedByHarness: state.killedByHarness,
    cgroupOomKills: memory.oomKills,
    stderr: stderrTail,
    eventsRequired: spec.eventsRequired,
    malformedEvents: reader.malformed,
    addressSpaceCap: started.limit.mechanism === 'prlimit-as' ? started.limit.bytes : null,
  });
  if (state.afterDone && !timedOut && !stoppedByUser && classification.outcome !== 'oom' && steps > 0) {
    classification = {
      outcome: 'ok',
      reason:
        `reported done after ${steps} step event(s), then did not exit within ` +
        `${spec.doneGraceSeconds ?? DONE_GRACE_SECONDS} s (a hanging teardown); killed, and its steps are kept`,
    };
  }
  const full = watched.diskFull;
  if (full && classification.outcome !== 'ok')
    classification = {
      outcome: 'invalid',
      reason:
        `the disk holding the trial's files filled up while it ran (${formatBytes(full.freeBytes)} free at its end; ` +
        `its events file had grown to ${formatBytes(full.eventsBytes)}), so its failure says nothing about its config: ` +
        `${classification.reason}`,
    };
  if (watched.pidsHits > 0 && classification.outcome !== 'ok')
    classification = {
      ...classification,
      reason:
        `hit its limit of ${spec.pids} processes and threads (pids.max: ${watched.pidsHits} fork(s) refused; ` +
        `raise limits.pids if the workload needs more): ${classification.reason}`,
    };
  if (state.tampered !== undefined)
    classification = {
      outcome: 'invalid',
      reason:
        `${state.tampered}: its measurement was not made under the limits the run set, so it counts as no result; ` +
        'a workload run as root can undo its cgroups: run it as an unprivileged user (limits.user)',
    };
  const problems = trialProblems({ spec, watched, classification, atHook, atDone });
  if (problems.length > 0)
    classification = { ...classification, reason: `${classification.reason}; ${problems.join('; ')}` };
  const endedBy = endedByOf(state, { atHook, atDone, exitCode, signal });
  return { classification, endedBy, atHook, atDone, exitCode, signal, stderrTail };
}

/**
 * Who ended the trial, from the watch's flags, in the order the judgement reads them: a break-out, a stop
 * of the run and a timeout come first (whatever the process did next), then what tunebench ended it at
 * (one rank's OOM, `done`, the stop hook, a hanging teardown), else the process's own exit or signal.
 */
function endedByOf(
  state: WatchState,
  j: { atHook: boolean; atDone: boolean; exitCode: number | null; signal: string | null },
): EndedBy {
  if (state.tampered !== undefined) return { by: 'broke-out', why: state.tampered };
  if (state.stoppedByUser && !state.timedOut) return { by: 'stop' };
  if (state.timedOut) return { by: 'timeout' };
  if (state.stoppedAtOom !== undefined) return { by: 'rank-oom', rank: state.stoppedAtOom };
  if (j.atHook) return { by: 'plateau' };
  if (j.atDone) return { by: 'done' };
  if (state.afterDone) return { by: 'hanging-teardown' };
  if (j.signal !== null) return { by: 'signal', signal: j.signal };
  return { by: 'exit', code: j.exitCode ?? 0 };
}

/** What went wrong beside the outcome (events, early stops, processes left), each said once in the reason. */
function trialProblems(opts: {
  spec: ProcessTrialSpec;
  watched: WatchedTrial;
  classification: Classification;
  atHook: boolean;
  atDone: boolean;
}): string[] {
  const { spec, watched, classification, atHook, atDone } = opts;
  const { reader, state, left } = watched;
  const readerError = state.readerError;
  const ranks = spec.ranks ?? 1;
  return [
    reader.problem,
    readerError && `reading the events file failed: ${readerError}`,
    classification.outcome === 'ok' && reader.malformed > 0 && `${reader.malformed} malformed event line(s) ignored`,
    atHook && 'stopped by the harness when its stop rule was met (the rest of its steps and the teardown are not run)',
    atDone &&
      !atHook &&
      `stopped at its done event${ranks > 1 ? ` from each of its ${ranks} ranks` : ''} ` +
        '(the teardown is not waited for)',
    state.stoppedAtOom !== undefined && `every rank was stopped at the oom event of rank ${state.stoppedAtOom}`,
    watched.pidsHits > 0 &&
      classification.outcome === 'ok' &&
      `${watched.pidsHits} fork(s) refused at its limit of ${spec.pids} processes and threads (limits.pids)`,
    left.length > 0 &&
      `${left.length} process(es) in the trial's cgroup were not ended (pids ${left.join(', ')}: moved in ` +
        'from outside the trial, or unkillable)',
  ].filter((x): x is string => typeof x === 'string' && x.length > 0);
}

/** The trial's result: its judgement, events, exit, memory and how it was contained. */
function trialResult(opts: {
  spec: ProcessTrialSpec;
  started: StartedTrial;
  watched: WatchedTrial;
  judgement: Judgement;
}): ProcessTrialResult {
  const { spec, started, watched, judgement } = opts;
  const { launched, cgroup, limit } = started;
  const { reader, state } = watched;
  return {
    ...judgement.classification,
    events: reader.events,
    malformedEvents: reader.malformed,
    exitCode: judgement.exitCode,
    signal: judgement.signal,
    stderrTail: judgement.stderrTail,
    wallSeconds: Number(process.hrtime.bigint() - started.started) / 1e9,
    clock: { launchMs: started.launchMs, startedMs: started.startedMs, exitMs: watched.exitMs, endMs: Date.now() },
    ...withTiming(launched.timing?.()),
    peakTreeRssBytes: watched.sampler.peakRss,
    telemetry: watched.telemetry,
    cgroupPeakBytes: watched.memory.peakBytes,
    ...(launched.sharedBytes !== undefined ? { sharedBytes: launched.sharedBytes } : {}),
    limit,
    contained: cgroup ? 'cgroup' : 'process-tree',
    aborted: state.stoppedByUser && !state.timedOut,
    endedBy: judgement.endedBy,
    ...(spec.fork ? { launch: 'fork' as const } : {}),
    ...(judgement.atHook ? { stoppedEarly: true } : {}),
  };
}

const withTiming = (timing: ProcessTiming | undefined) => (timing ? { timing } : {});

/** The processes whose environment carries the mark (or, with `prefix`, any mark that starts with it). */
export function markedProcesses(mark: string, opts: { prefix?: boolean } = {}): number[] {
  return scanMarks(mark, opts.prefix === true).map((m) => m.pid);
}

/** The processes whose mark starts with `prefix`, with their whole mark (it names its owner). */
export function markedProcessesWithMarks(prefix: string): { pid: number; mark: string }[] {
  return scanMarks(prefix, true);
}

function scanMarks(mark: string, prefix: boolean): { pid: number; mark: string }[] {
  const needle = Buffer.from(`${TRIAL_MARK_ENV}=${mark}${prefix ? '' : '\0'}`);
  const out: { pid: number; mark: string }[] = [];
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
      if (at === 0 || (at > 0 && environ[at - 1] === 0)) {
        const from = at + TRIAL_MARK_ENV.length + 1;
        const end = environ.indexOf(0, from);
        out.push({ pid: Number(entry), mark: environ.subarray(from, end < 0 ? undefined : end).toString() });
      }
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
  // In cgroups of its own, the trial's processes are its cgroups' members, whatever they did to their
  // group, parent or environment: killing the cgroups ends them all, without scanning /proc.
  if (t.cgroup && signal === 'SIGKILL') {
    if (t.root) signalGroup(t.root, signal);
    const left = killTrialCgroup(t.cgroup);
    if (t.server && t.root) t.server.endStragglers(t.root);
    return left;
  }
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
function makeCgroup(limit: MemoryLimit, owner: Owner, label: string, pids?: number): TrialCgroup | undefined {
  try {
    return trialCgroup(limit, owner, label, pids);
  } catch (error) {
    if (!capsTree(limit.mechanism)) return undefined; // contained by the process tree and the mark instead
    throw new TrialError(`could not make the trial's cgroup: ${String(error)}`, { cause: error });
  }
}

/** The disk of the trial's files when it is (nearly) full: its free bytes and the events file's size; else undefined. */
function fullDisk(scratchDir: string, eventsPath: string): { freeBytes: number; eventsBytes: number } | undefined {
  const free = freeBytes(scratchDir);
  if (free === null || free >= MIN_FREE_BYTES) return undefined;
  let eventsBytes = 0;
  try {
    eventsBytes = statSync(eventsPath).size;
  } catch {
    // gone
  }
  return { freeBytes: free, eventsBytes };
}
