// Turns one configuration into one trial record: builds the command, runs it, summarises the steps.
import { rmSync } from 'node:fs';
import { ConfigError, TrialError } from '../errors.js';
import { DEFAULT_TRIAL_PIDS, type Experiment } from '../experiment/schema.js';
import { stepLatency } from '../stats/summary.js';
import { ratioThroughput } from '../stats/throughput.js';
import type { WorkloadEvent } from '../workloads/protocol/events.js';
import type { MeasureSteps, TrialCommand, Workload } from '../workloads/workload.js';
import { formatBytes } from '../experiment/units.js';
import { foreignLoadNote, isMaterial } from '../telemetry/foreign-load.js';
import { PATTERNS_VERSION } from '../workloads/protocol/oom-patterns.js';
import { capsTree, type CudaUse } from './limits.js';
import { runProcessTrial, type ProcessTrialResult, type ProcessTrialSpec } from './process.js';
import { failedIn, phaseRuns } from './phases.js';
import { summarizeEvents, type EventSummary } from './ranks.js';
import { MemorySeriesTracker } from './memory-series.js';
import { trialTimeline } from './timeline.js';
import { exceptionOf } from './exception.js';
import { resolveUser } from './run-as.js';
import type { WarmPool } from './warm-pool.js';
import { WarmForkError } from './warm-server.js';
import {
  RECORD_VERSION,
  stepCount,
  type Config,
  type MemoryGrowth,
  type Role,
  type RoleKind,
  type TrialException,
  type TrialRecord,
} from '../domain/index.js';

export interface TrialContext {
  workload: Workload;
  limits: Experiment['limits'];
  /** Whether the workload may start CUDA: then it never gets an address-space cap (trial/limits.ts). */
  cuda?: CudaUse;
  scratchDir: string;
  signal?: AbortSignal;
  onEvent?: (event: WorkloadEvent) => void;
  /** Warm servers for workloads with `warm_start: fork`; without it every trial is a fresh process. */
  warm?: WarmPool;
  /**
   * The parameter whose value is the samples of a step of a trial timed as a whole process (a workload that
   * reports no steps): the run's batch parameter (its max-batch stage's `param`). Default: batch_size.
   */
  samplesParam?: string;
}

export interface TrialRequest {
  index: number;
  stage: string;
  role: Role;
  config: Config;
  measure: MeasureSteps;
  /** Another program and arguments for this trial (a claim's two commands); command workloads only. */
  argv?: readonly string[];
  /** Protocol variables the harness adds for this trial (a bracket session's control file). */
  env?: Readonly<Record<string, string>>;
  /** A session of attempts (trial/bracket-session.ts): it reports no steps of its own and is not timed as a whole. */
  session?: true;
  /** This trial's timeout, when the stage derived a longer one than limits.timeout (a run until memory flattens). */
  timeoutSeconds?: number;
  /**
   * The memory that decides the trial is the device's (a max-batch search against the card): a fork of a
   * warm server that never touched the device needs the device memory a fresh process needs, so even a
   * confirmation may fork (host pages shared with the server do not count there).
   */
  deviceBound?: boolean;
}

export async function runTrial(ctx: TrialContext, req: TrialRequest): Promise<TrialRecord> {
  const config = { ...ctx.workload.fixedParams, ...req.config };
  const built = ctx.workload.command(config, req.measure, req.argv);
  const command = {
    ...built,
    ...(req.env ? { env: { ...built.env, ...req.env } } : {}),
    ...(req.session ? { eventsRequired: false } : {}),
  };
  const trialId = `t${String(req.index).padStart(4, '0')}`;
  if (command.prepare) await runHook({ ctx, command, trialId, index: req.index, which: 'prepare' });
  const startedAt = new Date().toISOString();
  // Memory per step for the record; under a plateau rule it also ends the trial once memory has flattened.
  const tracker = new MemorySeriesTracker(req.measure.plateau, command.ranks ?? 1);
  const spec = {
    ...trialSpec({ ctx, command, trialId, tracker }),
    ...(req.timeoutSeconds !== undefined ? { timeoutSeconds: req.timeoutSeconds } : {}),
  };
  const launchNotes: string[] = [];
  const result = failureIgnored(await launchTrial({ ctx, req, command, spec, notes: launchNotes }), command);
  if (command.conclude) await runHook({ ctx, command, trialId, index: req.index, which: 'conclude' });
  const ranks = command.ranks ?? 1;
  tracker.finish(result.events);
  const series = tracker.series();
  const growth = result.outcome === 'ok' ? tracker.verdict(req.measure.warmupSteps + req.measure.steps) : undefined;
  const measured = measuredSteps({
    result,
    command,
    samples: Number(config[ctx.samplesParam ?? 'batch_size'] ?? 1),
    ranks,
    session: req.session === true,
  });
  const memory = memoryFigures(result, measured.summary, ranks);
  const overrun = stepOverrun(stepCount(measured.steps) + stepCount(measured.warmupSteps), req.measure);
  const notes = trialNotes({ result, launchNotes, memory, overrun });
  if (measured.summary.epochsAtLeast)
    notes.push(
      `the workload reported more than ${measured.summary.epochs} distinct epochs, more than tunebench tells apart: ` +
        'epochs is a lower bound (does its step event count steps in the epoch field?)',
    );
  const phases = phaseRuns(result.events);
  const failure = failedIn(result.events, result.outcome);
  return {
    v: RECORD_VERSION,
    index: req.index,
    stage: req.stage,
    role: req.role,
    config,
    ...(req.argv ? { argv: command.argv } : {}),
    ...(result.launch ? { launch: result.launch } : {}),
    outcome: result.outcome,
    reason: overrun && result.outcome === 'timeout' ? `${result.reason}; ${overrun}` : result.reason,
    exit_code: result.exitCode,
    signal: result.signal,
    ...stepFields(measured),
    ...memoryFields({ result, memory, summary: measured.summary, series, growth, ranks }),
    wall_seconds: result.wallSeconds,
    timeline: trialTimeline(result.clock, result.events),
    ...processTimes(result),
    started_at: startedAt,
    ...(phases.length > 0 ? { phases } : {}),
    ...(failure ? { failed_in: failure } : {}),
    malformed_events: result.malformedEvents,
    stderr_tail: result.outcome === 'ok' ? '' : result.stderrTail,
    ...(result.outcome === 'ok' ? {} : errorField(result.stderrTail)),
    patterns_version: PATTERNS_VERSION,
    ...(notes.length > 0 ? { notes } : {}),
    ended_by: result.endedBy,
  };
}

/** The process trial for a workload's command, under the experiment's limits. */
function trialSpec(opts: {
  ctx: TrialContext;
  command: TrialCommand;
  trialId: string;
  tracker: MemorySeriesTracker;
}): ProcessTrialSpec {
  const { ctx, command, trialId, tracker } = opts;
  return {
    argv: command.argv,
    env: command.env,
    ...(command.cwd ? { cwd: command.cwd } : {}),
    timeoutSeconds: ctx.limits.timeout,
    ...(ctx.limits.memory !== undefined ? { memoryBytes: ctx.limits.memory } : {}),
    mechanism: ctx.limits.mechanism,
    ...(ctx.cuda ? { cuda: ctx.cuda } : {}),
    eventsRequired: command.eventsRequired,
    scratchDir: ctx.scratchDir,
    trialId,
    // The record needs the steps and the memory report, both sent before `done`: the teardown is not waited for.
    stopAtDone: true,
    stopWhen: tracker.update,
    ...(ctx.onEvent ? { onEvent: ctx.onEvent } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(command.ranks !== undefined ? { ranks: command.ranks } : {}),
    ...(command.stdio ? { stdio: command.stdio } : {}),
    ...(ctx.limits.user !== undefined ? { runAs: resolveUser(ctx.limits.user) } : {}),
    pids: ctx.limits.pids ?? DEFAULT_TRIAL_PIDS,
    ...(ctx.limits.cgroupfs === 'read-only' ? { readOnlyCgroupfs: true as const } : {}),
  };
}

/**
 * With ignoreFailure (`tunebench time -i`), a run that exited non-zero is a timed run: outcome ok,
 * its exit code kept in the record. A signal, a timeout or an OOM stays what it was.
 */
function failureIgnored(result: ProcessTrialResult, command: TrialCommand): ProcessTrialResult {
  if (!command.ignoreFailure || result.outcome !== 'crash' || result.exitCode === null) return result;
  return { ...result, outcome: 'ok', reason: `exit code ${result.exitCode}, timed all the same (ignore_failure)` };
}

/**
 * Runs the trial (forked or fresh) and removes the command's files; throws when the launcher could not
 * start the ranks or the trial was stopped before it finished.
 */
async function launchTrial(opts: {
  ctx: TrialContext;
  req: TrialRequest;
  command: TrialCommand;
  spec: ProcessTrialSpec;
  notes: string[];
}): Promise<ProcessTrialResult> {
  const { ctx, req, command, spec, notes } = opts;
  let result: ProcessTrialResult;
  try {
    result = await runWarmOrFresh({
      ctx,
      command,
      spec,
      notes,
      role: req.role,
      untilFlat: req.measure.plateau !== undefined && !req.deviceBound,
      deviceBound: req.deviceBound === true,
    });
  } catch (error) {
    throw command.launcherField && error instanceof ConfigError ? launcherError(command, error.message, error) : error;
  } finally {
    for (const path of command.cleanup ?? []) rmSync(path, { recursive: true, force: true });
  }
  const unlaunched = command.launcherField ? launcherFailure(result) : undefined;
  if (unlaunched) throw launcherError(command, unlaunched);
  // Every trial would fail the same way under this cap: the run stops before tuning, with the fix.
  if (result.limitProblem) throw new ConfigError(`trial ${req.index}: ${result.reason}`);
  if (result.aborted) throw new TrialError(`trial ${req.index} was stopped before it finished; it is not recorded`);
  return result;
}

/** The trial's steps and warmup steps, with the events' summary they come from. */
interface MeasuredSteps {
  summary: EventSummary;
  steps: EventSummary['steps'];
  warmupSteps: EventSummary['warmup'];
  /** Timed as a whole process: the program sent no step events. */
  processTimed: boolean;
}

/** The steps the events report; one whole-process step for a program that ignores the protocol. */
function measuredSteps(opts: {
  result: ProcessTrialResult;
  command: TrialCommand;
  /** Samples a whole-process run counts per rank: the value of the run's batch parameter. */
  samples: number;
  ranks: number;
  session: boolean;
}): MeasuredSteps {
  const { result, command, samples, ranks, session } = opts;
  const summary = summarizeEvents(result.events, ranks);
  const { steps, warmup: warmupSteps } = summary;
  const processTimed = steps.length === 0 && result.outcome === 'ok' && !command.eventsRequired && !session;
  // steps and warmupSteps hold at most MAX_STEP_DETAIL samples each, then one folded sample (ranks.ts).
  if (processTimed) {
    // Whole-process timing for programs that ignore the protocol: the process's own window (exec to
    // exit) where the harness has it, never the harness's work around it.
    const seconds = result.timing?.seconds ?? result.wallSeconds;
    steps.push({ samples: samples * ranks, seconds });
  }
  return { summary, steps, warmupSteps, processTimed };
}

/** The trial's memory figures for the record. */
interface MemoryFigures {
  peakRss: number | null;
  limited: number | null;
  /** Of a fork: the warm server's memory counted against the cap (0 for a fresh process). */
  shared: number;
  /** The tree's peak RSS when it exceeded a per-process cap. */
  treeOverCap: number | undefined;
}

function memoryFigures(result: ProcessTrialResult, summary: EventSummary, ranks: number): MemoryFigures {
  const { reportedRss, reportedLimited } = summary;
  // The workload's own figure is exact for its process; the sampled tree adds worker processes. Of N
  // ranks the largest rank's figure is the memory (the tree, the launcher and every rank, stays in telemetry).
  // A trial that ended before the first telemetry interval was never sampled: in cgroups, their peak is
  // the tree's peak memory, exactly (the sampled RSS plus the page cache the tree charged).
  const treeRss =
    result.peakTreeRssBytes > 0
      ? result.peakTreeRssBytes
      : result.cgroupPeakBytes !== null && result.cgroupPeakBytes > 0
        ? result.cgroupPeakBytes
        : null;
  const peakRss =
    ranks > 1
      ? reportedRss
      : reportedRss !== null && treeRss !== null
        ? Math.max(reportedRss, treeRss)
        : (reportedRss ?? treeRss);
  const shared = result.sharedBytes ?? 0;
  const limited = capsTree(result.limit.mechanism)
    ? result.cgroupPeakBytes === null
      ? null
      : result.cgroupPeakBytes + shared
    : result.limit.mechanism === 'prlimit-as'
      ? reportedLimited
      : peakRss;
  // prlimit caps each process's address space, not the tree: workers (a DataLoader's) each get the
  // whole cap, so the tree can hold more than the cap and still run ok.
  const treeOverCap =
    ranks === 1 &&
    result.limit.mechanism === 'prlimit-as' &&
    result.limit.bytes !== null &&
    treeRss !== null &&
    treeRss > result.limit.bytes
      ? treeRss
      : undefined;
  return { peakRss, limited, shared, treeOverCap };
}

/** The record's process window and CPU times (a fresh process's; a fork has none). */
function processTimes(result: ProcessTrialResult) {
  const t = result.timing;
  if (!t) return {};
  return {
    process_seconds: t.seconds,
    ...(t.userSeconds !== null ? { user_seconds: t.userSeconds } : {}),
    ...(t.systemSeconds !== null ? { system_seconds: t.systemSeconds } : {}),
  };
}

/** The record's notes, in order: launch, shared memory, tree over cap, step overrun, foreign load. */
function trialNotes(opts: {
  result: ProcessTrialResult;
  launchNotes: readonly string[];
  memory: MemoryFigures;
  overrun: string | undefined;
}): string[] {
  const { result, launchNotes, memory, overrun } = opts;
  const { shared, treeOverCap } = memory;
  const notes: string[] = [...launchNotes];
  if (result.launch === 'fork' && shared > 0 && result.limit.bytes !== null)
    notes.push(sharedMemoryNote(result, shared));
  if (treeOverCap !== undefined && result.limit.bytes !== null) {
    notes.push(
      `the process tree's peak RSS (${formatBytes(treeOverCap)}) exceeded the ${formatBytes(result.limit.bytes)} cap: ` +
        'prlimit caps each process, not the tree (limits.mechanism cgroup caps the tree)',
    );
  }
  if (overrun) notes.push(overrun);
  const foreign = result.telemetry.summary.foreign_load;
  if (foreign && isMaterial(foreign)) notes.push(foreignLoadNote(foreign));
  return notes;
}

/** The record's step fields, in the record's order. */
function stepFields(measured: MeasuredSteps) {
  const { summary, steps, warmupSteps, processTimed } = measured;
  return {
    steps,
    warmup_steps: stepCount(warmupSteps),
    ...(processTimed ? { timing: 'process' as const } : {}),
    warmup: warmupSteps,
    ...(summary.epochs > 0 ? { epochs: summary.epochs } : {}),
    samples_per_second: ratioThroughput(steps),
    step_seconds: processTimed ? stepLatency(steps) : summary.latency,
  };
}

/**
 * A verdict read from another series than the cap's (the workload's own memory_bytes) carries the cap's measure
 * of the same run, the cgroup's peak of the whole tree: that is the figure the cap decides on and the one shown.
 */
function withCapPeak(growth: MemoryGrowth, mechanism: string, capped: number | null): MemoryGrowth {
  if (growth.verdict === 'unproven' || growth.source === 'cgroup' || capped === null) return growth;
  return mechanism.startsWith('cgroup') ? { ...growth, cap_peak_bytes: capped } : growth;
}

/** The record's memory fields (with the telemetry), in the record's order. */
function memoryFields(opts: {
  result: ProcessTrialResult;
  memory: MemoryFigures;
  summary: EventSummary;
  series: ReturnType<MemorySeriesTracker['series']>;
  growth: ReturnType<MemorySeriesTracker['verdict']> | undefined;
  ranks: number;
}) {
  const { result, memory, summary, series, growth, ranks } = opts;
  const { treeOverCap } = memory;
  return {
    peak_rss_bytes: memory.peakRss,
    peak_limited_bytes: memory.limited,
    peak_device_bytes: summary.reportedDevice,
    limit: {
      mechanism: result.limit.mechanism,
      bytes: result.limit.bytes,
      contained: result.contained,
      ...(treeOverCap !== undefined ? { tree_over_cap_bytes: treeOverCap } : {}),
    },
    telemetry: result.telemetry,
    ...(series ? { memory_series: series } : {}),
    ...(growth ? { memory_growth: withCapPeak(growth, result.limit.mechanism, memory.limited) } : {}),
    ...(summary.report ? { workload_report: summary.report } : {}),
    ...(ranks > 1 ? { ranks } : {}),
    ...(summary.peakRank !== undefined ? { peak_rank: summary.peakRank, rank_peak_bytes: summary.rankPeaks } : {}),
  };
}

/** A fork's memory includes the warm server's: says how it counted against the cap. */
function sharedMemoryNote(result: ProcessTrialResult, shared: number): string {
  const how = capsTree(result.limit.mechanism)
    ? 'its cgroup cap was lowered by as much and its peak includes it'
    : 'its address space includes it, as a fresh process would';
  return (
    `the trial's memory includes the warm server's ${formatBytes(shared)} (imports and setup()), counted against ` +
    `limits.memory as a fresh process would hold it: ${how}`
  );
}

/** What `python -m torch.distributed.run` prints when the interpreter lacks torch, or torch lacks it. */
const MISSING_TORCHRUN =
  /No module named torch\.distributed\.run|Error while finding module specification for 'torch\.distributed\.run'.*/;

/**
 * Why the launcher itself failed, when it did: its interpreter has no torch.distributed.run, or the
 * program could not be executed. Every trial would fail the same way, so the run stops with the fix.
 */
export function launcherFailure(
  result: Pick<ProcessTrialResult, 'outcome' | 'reason' | 'stderrTail' | 'events' | 'notStarted'>,
) {
  if (result.outcome === 'ok' || result.events.length > 0) return undefined;
  const missing = MISSING_TORCHRUN.exec(result.stderrTail);
  if (missing) return missing[0];
  // The classification says so as a field: the reason's words are for people (issue 46).
  if (result.notStarted) return result.reason;
  return undefined;
}

function launcherError(command: TrialCommand, why: string, cause?: unknown): ConfigError {
  const program = command.argv.slice(0, command.argv.indexOf('--nnodes=1')).join(' ');
  return new ConfigError(
    `workload.launcher: ${JSON.stringify(program)} could not start the ranks (${why}); ` +
      `it was chosen by ${command.launcherField}: set workload.launcher.python to an interpreter with torch ` +
      `("<python> -c 'import torch.distributed.run'" must work), or put torchrun on PATH`,
    [],
    cause === undefined ? undefined : { cause },
  );
}

/**
 * A workload that reports far more steps than it was asked for does not stop by itself (a loop over
 * the whole loader, or over epochs): every trial then runs to its timeout. Says so, with the fix.
 */
export function stepOverrun(reported: number, measure: MeasureSteps): string | undefined {
  const asked = measure.warmupSteps + measure.steps;
  if (reported <= 2 * asked + 2) return undefined;
  return (
    `the workload reported ${reported} steps for ${asked} asked ` +
    `(TUNEBENCH_WARMUP_STEPS ${measure.warmupSteps} + TUNEBENCH_STEPS ${measure.steps}): ` +
    'it does not stop when the trial has its steps, so the trial takes longer than it must or runs to its timeout; ' +
    `iterate with the adapter's timer.batches(loader), which stops by itself, or stop after that many steps`
  );
}

/**
 * The workload's prepare (before a trial) or conclude (after it) command, untimed: same environment,
 * working directory and timeout, no memory cap. A failure stops the run (the trials so far stay in the
 * journal): a trial after a failed preparation would measure something else.
 */
async function runHook(opts: {
  ctx: TrialContext;
  command: TrialCommand;
  trialId: string;
  index: number;
  which: 'prepare' | 'conclude';
}): Promise<void> {
  const { ctx, command, trialId, index, which } = opts;
  const argv = command[which]!;
  const result = await runProcessTrial({
    argv,
    env: command.env,
    ...(command.cwd ? { cwd: command.cwd } : {}),
    timeoutSeconds: ctx.limits.timeout,
    mechanism: 'none',
    eventsRequired: false,
    scratchDir: ctx.scratchDir,
    trialId: `${trialId}-${which}`,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  if (result.aborted) throw new TrialError(`the ${which} command of trial ${index} was stopped before it finished`);
  if (result.outcome !== 'ok') {
    const tail = result.stderrTail.trim().split('\n').slice(-3).join(' | ');
    throw new ConfigError(
      `the ${which} command ${JSON.stringify(argv.join(' '))} failed ${which === 'prepare' ? 'before' : 'after'} ` +
        `trial ${index} (${result.outcome}: ${result.reason})${tail ? `; stderr: ${tail}` : ''}; ` +
        `it runs ${which === 'prepare' ? 'before' : 'after'} every trial and must exit 0: fix it, or remove ` +
        `workload.${which} (--${which})`,
    );
  }
}

/**
 * Roles whose trial decides that a batch holds in the training that follows: they always run as a fresh
 * process, the process the user's training runs in, as does every run until memory flattens (a probe
 * after a failed confirmation). A fork shares the warm server's pages and arenas, so its memory is not
 * what a fresh process needs (a max found by forks measured above the fresh max).
 */
export const FRESH_PROCESS_ROLES: ReadonlySet<RoleKind> = new Set(['confirm', 'repeat', 'final-confirm']);

/**
 * Forks the trial from the workload's warm server when it has one (and the role allows it); otherwise,
 * or when the server cannot fork it, runs it as a fresh process and says why in `notes`.
 */
async function runWarmOrFresh(opts: {
  ctx: TrialContext;
  command: TrialCommand;
  spec: ProcessTrialSpec;
  /** Where it says why the trial ran as a fresh process. */
  notes: string[];
  role: Role;
  /** The trial runs until its memory flattens (a plateau rule). */
  untilFlat: boolean;
  /** Device memory decides it: a fork is as fresh as a new process for it (TrialRequest.deviceBound). */
  deviceBound: boolean;
}): Promise<ProcessTrialResult> {
  const { ctx, command, spec, notes, role, untilFlat, deviceBound } = opts;
  if (!ctx.warm || !command.warm) return runProcessTrial(spec);
  const fresh = FRESH_PROCESS_ROLES.has(role.kind);
  if ((fresh && !deviceBound) || untilFlat) {
    notes.push(
      `a ${untilFlat && !fresh ? 'run until memory flattens' : role.kind} runs as a fresh process, ` +
        'as the training that follows does (not a fork of the warm server)',
    );
    return runProcessTrial(spec);
  }
  const got = await ctx.warm.server(command.warm);
  if ('fallback' in got) {
    if (got.first) notes.push(got.fallback);
    return runProcessTrial(spec);
  }
  try {
    return await runProcessTrial({ ...spec, fork: got.server });
  } catch (error) {
    if (!(error instanceof WarmForkError)) throw error;
    notes.push(`the warm server could not fork this trial (${error.message}); it ran as a fresh process`);
    return runProcessTrial(spec);
  }
}

/** The record's `error`: the exception a failed trial died of, when its stderr holds one. */
function errorField(tail: string): { error?: TrialException } {
  const error = exceptionOf(tail);
  return error ? { error } : {};
}
