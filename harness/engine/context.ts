// What every stage runner receives and returns: the shared run state and the values it chose.
import { dirname } from 'node:path';
import { ConfigError, StoreError } from '../errors.js';
import { formatBytes } from '../experiment/units.js';
import { freeBytes, MIN_FREE_BYTES } from '../store/atomic.js';
import type { Experiment } from '../experiment/schema.js';
import type { Journal } from '../store/journal.js';
import type { RunLock } from '../store/lock.js';
import type { TrialContext } from '../trial/run-trial.js';
import { canonicalConfig, type Executor, type TrialSpec } from '../executors/executor.js';
import type { Progress } from './progress.js';
import type { Config, Fingerprint, StageOutcome, TrialRecord } from '../domain/index.js';
import { deviceName, role } from '../domain/index.js';

export interface StageContext {
  experiment: Experiment;
  trial: TrialContext;
  journal: Journal;
  progress: Progress;
  /** Every record so far in this run, in journal order. */
  records: TrialRecord[];
  /** Fixed parameters plus the values earlier stages chose. */
  baseConfig: Config;
  /** One line naming the machine (host, CPU, GPU), for sentences in reports. */
  environment?: string;
  /** Whether an NVIDIA GPU was found: claims that need CUDA are skipped without one. */
  hasCuda?: boolean;
  /**
   * On resume, the journal's completed trials: trial i of the replayed run returns replay[i]
   * instead of running again, so each stage retraces its decisions up to where it was stopped.
   */
  replay?: TrialRecord[];
  /** How many of the replayed trials the journal already holds; the rest (from a SLURM allocation) are appended. */
  journaled?: number;
  /** Where trials run: here, one at a time (the default), or as SLURM job arrays. */
  executor: Executor;
  /** The device the current stage's trials run on: this machine, or a SLURM stage's allocation. */
  device?: StageDevice;
  /** The stages that finished before the current one, in order. */
  outcomes?: readonly StageOutcome[];
  /** Of a SLURM stage worker: the devices earlier stages ran on in their own allocations, by stage index. */
  stageDevices?: ReadonlyMap<number, StageDevice>;
  /** The run directory's lock (absent in a SLURM stage worker): checked before each trial. */
  lock?: Pick<RunLock, 'check'>;
}

/** A machine as a stage sees it: its host, device class and GPU memory (null without a GPU). */
export interface StageDevice {
  host: string;
  /** The GPU name, or the CPU model without one. */
  name: string;
  gpu_memory_bytes: number | null;
}

/** The device of a machine from its fingerprint (`host`: the name its trial records carry). */
export function deviceOf(env: Fingerprint, host: string = env.host): StageDevice {
  return {
    host,
    name: deviceName(env),
    gpu_memory_bytes: env.gpu && env.gpu.memory_bytes > 0 ? env.gpu.memory_bytes : null,
  };
}

/** Runs one trial, journals it before returning, and reports progress. */
export async function runJournaledTrial(
  ctx: StageContext,
  trial: TrialSpec,
  position: { n: number; ofAbout: number; show: string[]; etaSeconds?: number },
): Promise<TrialRecord> {
  const { stage, role, config, measure, argv, deviceBound, timeoutSeconds } = trial;
  const index = ctx.records.length;
  const done = ctx.replay?.[index];
  if (done) {
    assertSameTrial(done, { index, stage, role, config, argv });
    if (index >= (ctx.journaled ?? Infinity)) ctx.journal.append(done);
    ctx.records.push(done);
    return done;
  }
  const lost = ctx.lock?.check();
  if (lost)
    throw new StoreError(
      `the run stopped before trial ${index}: this tunebench no longer holds its run directory (${lost}); two ` +
        'runs never write one journal. The completed trials are kept: once no other tunebench uses the directory, resume it',
    );
  const journalDir = dirname(ctx.journal.path);
  const free = freeBytes(journalDir);
  if (free !== null && free < MIN_FREE_BYTES) {
    throw new StoreError(
      `the disk holding ${journalDir} is full: ${formatBytes(free)} free, ` +
        `and tunebench needs ${formatBytes(MIN_FREE_BYTES)} to record trial ${index}`,
    );
  }
  ctx.progress.trialStart({
    stage,
    n: position.n,
    ofAbout: position.ofAbout,
    config,
    role,
    show: position.show,
    ...(position.etaSeconds !== undefined ? { etaSeconds: position.etaSeconds } : {}),
  });
  const spec = {
    stage,
    role,
    config,
    measure,
    ...(argv ? { argv } : {}),
    ...(deviceBound ? { deviceBound } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
  };
  const record = await ctx.executor.run(index, spec, (e) => ctx.progress.trialEvent(e));
  const after = freeBytes(journalDir);
  if (record.outcome !== 'ok' && after !== null && after < MIN_FREE_BYTES / 2) {
    // The trial's own files (its events) live on this disk: a failure now may be the disk's, not the workload's.
    throw new StoreError(
      `the disk holding ${journalDir} filled up during trial ${index} (${formatBytes(after)} free); ` +
        `its outcome "${record.outcome}" may be the disk's fault, so it is not recorded`,
    );
  }
  ctx.journal.append(record);
  ctx.records.push(record);
  ctx.progress.trialEnd(record);
  return record;
}

/**
 * Journals a record the stage ran itself (a bracket session); `replayed`: the journal's own record on
 * resume, appended again only where the journal does not hold it yet.
 */
export function journalRecord(ctx: StageContext, record: TrialRecord, opts: { replayed?: boolean } = {}): void {
  if (!opts.replayed || ctx.records.length >= (ctx.journaled ?? Infinity)) ctx.journal.append(record);
  ctx.records.push(record);
  if (!opts.replayed) ctx.progress.trialEnd(record);
}

/** runJournaledTrial for a trial described as the executor sees it. */
export function runSpecTrial(
  ctx: StageContext,
  s: TrialSpec,
  position: { n: number; ofAbout: number; show: string[] },
): Promise<TrialRecord> {
  return runJournaledTrial(ctx, s, position);
}

/**
 * Announces the trials a stage runs next, in order, so that a parallel executor can start them
 * together. Trials the journal already holds (resume) are not announced again.
 */
export async function planTrials(ctx: StageContext, trials: readonly TrialSpec[]): Promise<void> {
  const first = ctx.records.length;
  const done = Math.max(0, (ctx.replay?.length ?? 0) - first);
  if (trials.length > done) await ctx.executor.plan(first + done, trials.slice(done));
}

/** A journaled trial must be the trial the stage asks for again; anything else means the run cannot be replayed. */
function assertSameTrial(
  done: TrialRecord,
  want: { index: number; stage: string; role: string; config: Config; argv: readonly string[] | undefined },
): void {
  const same =
    done.stage === want.stage &&
    done.role === want.role &&
    JSON.stringify(canonicalConfig(done.config)) === JSON.stringify(canonicalConfig(want.config)) &&
    JSON.stringify(done.argv ?? null) === JSON.stringify(want.argv ?? null);
  if (!same) {
    throw new ConfigError(
      `cannot resume: journal trial ${want.index} is ${done.stage}/${done.role} ` +
        `${JSON.stringify(canonicalConfig(done.config))}, ` +
        `but the experiment now asks for ${want.stage}/${want.role} ${JSON.stringify(canonicalConfig(want.config))}; ` +
        'the journal was written by another tunebench version or was edited; start a new run',
    );
  }
}

/**
 * `count` untimed trials of each arm, in turn, before a stage's first timed trial (warm file caches,
 * JIT, lazy imports). They are journaled like any trial (so a resumed run retraces them), and no
 * statistic uses them. A failed warm-up is noted: the timed trials of that arm will say more.
 */
export async function runWarmups(
  ctx: StageContext,
  stage: string,
  count: number,
  arms: readonly TrialSpec[],
  show: string[],
): Promise<void> {
  if (count === 0 || arms.length === 0) return;
  const all = Array.from({ length: count }, (_, k) =>
    arms.map((a): TrialSpec => ({ ...a, role: role('warm-up', k + 1) })),
  ).flat();
  await planTrials(ctx, all);
  for (const [i, t] of all.entries()) {
    const record = await runSpecTrial(ctx, t, { n: i + 1, ofAbout: all.length, show });
    if (record.outcome !== 'ok')
      ctx.progress.note(`${stage}: warm-up trial ${record.index} ended ${record.outcome} (${record.reason})`);
  }
}
