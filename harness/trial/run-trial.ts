// Turns one configuration into one trial record: builds the command, runs it, summarises the steps.
import { ConfigError, TrialError } from '../errors.js';
import type { Experiment } from '../experiment/schema.js';
import { stepLatency } from '../stats/summary.js';
import { ratioThroughput } from '../stats/throughput.js';
import type { WorkloadEvent } from '../workloads/protocol/events.js';
import type { MeasureSteps, TrialCommand, Workload } from '../workloads/workload.js';
import { formatBytes } from '../experiment/units.js';
import { foreignLoadNote, isMaterial } from '../telemetry/foreign-load.js';
import { PATTERNS_VERSION } from '../workloads/protocol/oom-patterns.js';
import { runProcessTrial, type ProcessTrialResult, type ProcessTrialSpec } from './process.js';
import type { WarmPool } from './warm-pool.js';
import { WarmForkError } from './warm-server.js';
import type { Config, StepSample, TrialRecord } from '../domain/index.js';

export interface TrialContext {
  workload: Workload;
  limits: Experiment['limits'];
  scratchDir: string;
  signal?: AbortSignal;
  onEvent?: (event: WorkloadEvent) => void;
  /** Warm servers for workloads with `warm_start: fork`; without it every trial is a fresh process. */
  warm?: WarmPool;
}

export interface TrialRequest {
  index: number;
  stage: string;
  role: string;
  config: Config;
  measure: MeasureSteps;
  /** Another program and arguments for this trial (a claim's two commands); command workloads only. */
  argv?: readonly string[];
}

export async function runTrial(ctx: TrialContext, req: TrialRequest): Promise<TrialRecord> {
  const config = { ...ctx.workload.fixedParams, ...req.config };
  const command = ctx.workload.command(config, req.measure, req.argv);
  const trialId = `t${String(req.index).padStart(4, '0')}`;
  if (command.prepare) await runPrepare(ctx, command, trialId, req.index);
  const startedAt = new Date().toISOString();
  const spec: ProcessTrialSpec = {
    argv: command.argv,
    env: command.env,
    ...(command.cwd ? { cwd: command.cwd } : {}),
    timeoutSeconds: ctx.limits.timeout,
    ...(ctx.limits.memory !== undefined ? { memoryBytes: ctx.limits.memory } : {}),
    mechanism: ctx.limits.mechanism,
    eventsRequired: command.eventsRequired,
    scratchDir: ctx.scratchDir,
    trialId,
    // The record needs the steps and the memory report, both sent before `done`: the teardown is not waited for.
    stopAtDone: true,
    ...(ctx.onEvent ? { onEvent: ctx.onEvent } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  };
  const launchNotes: string[] = [];
  const result = await runWarmOrFresh(ctx, command, spec, launchNotes);
  if (result.aborted) throw new TrialError(`trial ${req.index} was stopped before it finished; it is not recorded`);
  const steps: StepSample[] = [];
  const warmupSteps: StepSample[] = [];
  const epochs = new Set<number>();
  let reportedRss: number | null = null;
  let reportedDevice: number | null = null;
  let reportedLimited: number | null = null;
  let report: Record<string, unknown> | undefined;
  for (const e of result.events) {
    if (e.event === 'step') {
      (e.warmup === true ? warmupSteps : steps).push(stepSample(e.samples, e.seconds, e.data_wait_seconds));
      if (typeof e.epoch === 'number' && Number.isSafeInteger(e.epoch) && e.epoch >= 0) epochs.add(e.epoch);
    } else if (e.event === 'memory') {
      // peak_bytes is the memory that bounds the batch: the GPU's on CUDA, else the host's.
      const onDevice = typeof e['device'] === 'string' && e['device'].startsWith('cuda');
      const hostRss = e['peak_rss_bytes'];
      reportedRss = typeof hostRss === 'number' ? hostRss : onDevice ? null : e.peak_bytes;
      reportedDevice = onDevice ? e.peak_bytes : null;
      const { event: _event, ...rest } = e;
      report = rest;
      const vm = e['peak_address_space_bytes'];
      if (typeof vm === 'number') reportedLimited = vm;
    }
  }
  const processTimed = steps.length === 0 && result.outcome === 'ok' && !command.eventsRequired;
  if (processTimed) {
    // Whole-process timing for programs that ignore the protocol.
    steps.push({ samples: Number(config['batch_size'] ?? 1), seconds: result.wallSeconds });
  }
  // The workload's own figure is exact for its process; the sampled tree adds worker processes.
  const treeRss = result.peakTreeRssBytes > 0 ? result.peakTreeRssBytes : null;
  const peakRss = reportedRss !== null && treeRss !== null ? Math.max(reportedRss, treeRss) : (reportedRss ?? treeRss);
  const limited =
    result.limit.mechanism === 'cgroup-v2'
      ? result.cgroupPeakBytes
      : result.limit.mechanism === 'prlimit-as'
        ? reportedLimited
        : peakRss;
  const notes: string[] = [...launchNotes];
  // prlimit caps each process's address space, not the tree: workers (a DataLoader's) each get the
  // whole cap, so the tree can hold more than the cap and still run ok.
  if (
    result.limit.mechanism === 'prlimit-as' &&
    result.limit.bytes !== null &&
    treeRss !== null &&
    treeRss > result.limit.bytes
  ) {
    notes.push(
      `the process tree's peak RSS (${formatBytes(treeRss)}) exceeded the ${formatBytes(result.limit.bytes)} cap: ` +
        'prlimit caps each process, not the tree (limits.mechanism cgroup caps the tree)',
    );
  }
  const overrun = stepOverrun(steps.length + warmupSteps.length, req.measure);
  if (overrun) notes.push(overrun);
  const foreign = result.telemetry.summary.foreign_load;
  if (foreign && isMaterial(foreign)) notes.push(foreignLoadNote(foreign));
  return {
    v: 1,
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
    steps,
    warmup_steps: warmupSteps.length,
    ...(processTimed ? { timing: 'process' as const } : {}),
    warmup: warmupSteps,
    ...(epochs.size > 0 ? { epochs: epochs.size } : {}),
    samples_per_second: ratioThroughput(steps),
    step_seconds: stepLatency(steps),
    peak_rss_bytes: peakRss,
    peak_limited_bytes: limited,
    peak_device_bytes: reportedDevice,
    limit: { mechanism: result.limit.mechanism, bytes: result.limit.bytes },
    telemetry: result.telemetry,
    ...(report ? { workload_report: report } : {}),
    wall_seconds: result.wallSeconds,
    started_at: startedAt,
    malformed_events: result.malformedEvents,
    stderr_tail: result.outcome === 'ok' ? '' : result.stderrTail,
    patterns_version: PATTERNS_VERSION,
    ...(notes.length > 0 ? { notes } : {}),
  };
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

function stepSample(samples: number, seconds: number, dataWait: number | undefined): StepSample {
  return dataWait === undefined ? { samples, seconds } : { samples, seconds, data_wait_seconds: dataWait };
}

/**
 * The workload's prepare command, untimed, before a trial: same environment, working directory and
 * timeout, no memory cap. A failure stops the run (the trials so far stay in the journal): a trial
 * after a failed preparation would measure something else.
 */
async function runPrepare(ctx: TrialContext, command: TrialCommand, trialId: string, index: number): Promise<void> {
  const argv = command.prepare!;
  const result = await runProcessTrial({
    argv,
    env: command.env,
    ...(command.cwd ? { cwd: command.cwd } : {}),
    timeoutSeconds: ctx.limits.timeout,
    mechanism: 'none',
    eventsRequired: false,
    scratchDir: ctx.scratchDir,
    trialId: `${trialId}-prepare`,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  if (result.aborted) throw new TrialError(`the prepare command of trial ${index} was stopped before it finished`);
  if (result.outcome !== 'ok') {
    const tail = result.stderrTail.trim().split('\n').slice(-3).join(' | ');
    throw new ConfigError(
      `the prepare command ${JSON.stringify(argv.join(' '))} failed before trial ${index} ` +
        `(${result.outcome}: ${result.reason})${tail ? `; stderr: ${tail}` : ''}; ` +
        'it runs before every trial and must exit 0: fix it, or remove workload.prepare (--prepare)',
    );
  }
}

/**
 * Forks the trial from the workload's warm server when it has one; otherwise, or when the server
 * cannot fork it, runs it as a fresh process and says why in `notes`.
 */
async function runWarmOrFresh(
  ctx: TrialContext,
  command: TrialCommand,
  spec: ProcessTrialSpec,
  notes: string[],
): Promise<ProcessTrialResult> {
  if (!ctx.warm || !command.warm) return runProcessTrial(spec);
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
