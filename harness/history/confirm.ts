// The confirmation of a regression alarm, as Chromium's Pinpoint does it: before `history` fails a
// night, the flagged metric's config is measured again with more trials in fresh processes,
// interleaved with the config of the reference level's latest run, through a claim stage of the same
// experiment (its own run directory under <history-out>/<experiment>/confirm/). The re-measured value
// (the metric's own estimator: geometric mean of per-trial samples/s, or the claim's speedup) then
// replaces the night's value and the gate tests it again.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { runExperiment } from '../engine/run-experiment.js';
import type { Progress } from '../executors/progress.js';
import type { ClaimStageSpec, Experiment } from '../experiment/schema.js';
import { ratioThroughput } from '../stats/throughput.js';
import type { RunEntry } from './index.js';
import type { Confirmation, GatedMetric } from './series-gate.js';
import type { ClaimSummary, TrialRecord } from '../domain/index.js';
import { confirmStage, metricSource, resolvedExperiment, sameConfig, type RunRead } from './confirm-source.js';
import type { Source } from '../engine/kinds/types.js';
import { readRunDir, type RunResult } from '../experiment/run-file.js';

export { CONFIRM_MIN_PAIRS, metricSource } from './confirm-source.js';

/** How the error of a confirmation stopped by a signal begins (printed, never matched). */
const STOPPED = 'the confirmation run was stopped';

export interface ConfirmOptions {
  /** Where the confirmation's run directory goes. */
  outDir: string;
  progress: Progress;
  signal?: AbortSignal;
  minDrop: number;
}

/**
 * What the confirmations of one run came to: measured (or failed to measure, with `error` set), or
 * stopped by a signal, which is evidence neither way and is not recorded.
 */
export type ConfirmOutcome =
  | { kind: 'confirmed'; confirmations: Confirmation[] }
  | { kind: 'stopped'; /** Why, as a sentence for the user. */ reason: string };

/** The runs a confirmation is about and the moment it started: what every Confirmation of it repeats. */
interface Night {
  latest: RunEntry;
  referenceRun: RunEntry | null;
  at: string;
}

/** One metric to re-measure and the claim stage that does it. */
interface Planned {
  metric: GatedMetric;
  stage: ClaimStageSpec;
  tonight: Source;
  same: boolean;
}

/** The runs the confirmations read: tonight's, and the reference's when there is one. */
interface Reads {
  tonight: RunRead;
  reference: RunRead | null;
}

const confirmed = (confirmations: Confirmation[]): ConfirmOutcome => ({ kind: 'confirmed', confirmations });

function failed(night: Night, m: GatedMetric, error: string, runDir: string | null = null): Confirmation {
  return {
    run_id: night.latest.run_id,
    metric: m.name,
    at: night.at,
    value: null,
    trials: 0,
    reference_run: night.referenceRun?.run_id ?? night.latest.run_id,
    same_config: true,
    config_ratio: null,
    run_dir: runDir,
    error,
  };
}

/** Reads the runs, or says why either cannot be read. */
function readRuns(night: Night): Reads | { why: string } {
  try {
    const tonight = readRunDir(night.latest.dir);
    const reference = night.referenceRun ? readRunDir(night.referenceRun.dir) : null;
    return { tonight, reference };
  } catch (error) {
    return { why: (error as Error).message };
  }
}

/** The claim stage of each metric whose config can be told; a failed confirmation for each other one. */
function plan(
  night: Night,
  reads: Reads,
  pending: readonly GatedMetric[],
  minDrop: number,
): { planned: Planned[]; unplanned: Confirmation[] } {
  const planned: Planned[] = [];
  const unplanned: Confirmation[] = [];
  for (const m of pending) {
    const tonight = metricSource(reads.tonight, m.name);
    if (!tonight) {
      unplanned.push(failed(night, m, `cannot tell which config measured ${m.name} in ${night.latest.dir}`));
      continue;
    }
    const reference = reads.reference ? metricSource(reads.reference, m.name) : null;
    const stage = confirmStage({ metric: m.name, n: planned.length + 1, tonight, reference, minDrop });
    planned.push({
      metric: m,
      stage,
      tonight,
      same: tonight.kind === 'claim' || !reference || sameConfig(tonight.config, reference.config),
    });
  }
  return { planned, unplanned };
}

/**
 * Tonight's experiment as it ran (run.json "resolved"), or why its trials cannot be run again. The
 * experiment file itself is not needed (a one-liner such as `tunebench time` never had one): only the
 * folder its relative paths resolve against, as on resume.
 */
function rerunnable(night: Night, experiment: Experiment | null, file: string): Experiment | { why: string } {
  if (!experiment)
    return {
      why:
        `the experiment that run ${night.latest.run_id} ran (run.json "resolved") ` +
        'does not validate with this tunebench, so its trials cannot be run again; run history with --no-confirm',
    };
  const base = dirname(file);
  if (!existsSync(base))
    return {
      why:
        `the folder ${base} that the relative paths of run ${night.latest.run_id} resolve against ` +
        "(its experiment file's folder, or where tunebench time was started) is gone, " +
        'so its trials cannot be run again; restore it or run history with --no-confirm',
    };
  return experiment;
}

type Measurement =
  { kind: 'ran'; result: RunResult } | { kind: 'stopped'; reason: string } | { kind: 'failed'; why: string };

/** Runs every planned stage in one run of tonight's experiment, as it ran. */
async function runPlanned(
  night: Night,
  run: { file: string; text: string; experiment: Experiment; planned: readonly Planned[] },
  o: ConfirmOptions,
): Promise<Measurement> {
  try {
    o.progress.note(
      `confirming ${run.planned.length} regression alarm(s) ` +
        `of ${night.latest.experiment} run ${night.latest.run_id}: ${run.planned.map((p) => p.metric.name).join(', ')}`,
    );
    const result = await runExperiment({
      experimentPath: run.file,
      // From run.json, as resume does: the file may have been edited since, and a one-liner has none.
      loaded: { experiment: structuredClone(run.experiment), source: run.file, text: run.text },
      outDir: o.outDir,
      progress: o.progress,
      ...(o.signal ? { signal: o.signal } : {}),
      adjust: (e) => {
        e.stages = run.planned.map((p) => p.stage);
      },
    });
    return { kind: 'ran', result };
  } catch (error) {
    return o.signal?.aborted
      ? { kind: 'stopped', reason: `${STOPPED} (${(error as Error).message})` }
      : { kind: 'failed', why: `the confirmation run failed: ${(error as Error).message}` };
  }
}

/** The re-measured value of one metric and the trials behind it. */
function remeasured(
  p: Planned,
  summary: ClaimSummary,
  records: readonly TrialRecord[],
): { value: number | null; trials: number } {
  if (p.tonight.kind === 'claim') return { value: summary.speedup?.estimate ?? null, trials: summary.pairs };
  const v = throughputs(
    records,
    p.same ? [...summary.trials.candidate, ...summary.trials.baseline] : summary.trials.candidate,
  );
  // The geometric mean of per-trial samples/s: the estimate of the sweep's and compare's intervals.
  const value = v.length > 0 ? Math.exp(v.reduce((a, x) => a + Math.log(x), 0) / v.length) : null;
  return { value, trials: v.length };
}

const throughputs = (records: readonly TrialRecord[], indices: readonly number[]) =>
  indices
    .map((i) => records.find((r) => r.index === i))
    .filter((r): r is TrialRecord => r?.outcome === 'ok')
    .map((r) => ratioThroughput(r.steps))
    .filter((v): v is number => v !== null && v > 0);

/** The confirmation of one planned metric from the stage that ran for it. */
function confirmationOf(night: Night, p: Planned, result: RunResult, records: readonly TrialRecord[]): Confirmation {
  const s = result.stages.find((x) => x.name === p.stage.name);
  const summary = s?.kind === 'claim' ? s.result : undefined;
  if (!summary) return failed(night, p.metric, 'the confirmation stage did not run', result.run_dir);
  const { value, trials } = remeasured(p, summary, records);
  const ratio =
    !p.same && summary.speedup
      ? { estimate: summary.speedup.estimate, low: summary.speedup.low, high: summary.speedup.high }
      : null;
  return {
    run_id: night.latest.run_id,
    metric: p.metric.name,
    at: night.at,
    value: value !== null && Number.isFinite(value) && value > 0 ? value : null,
    trials,
    reference_run: night.referenceRun?.run_id ?? night.latest.run_id,
    same_config: p.same,
    config_ratio: ratio,
    run_dir: result.run_dir,
    error: value === null ? `no trial of the confirmation measured ${p.metric.name} (${summary.reason})` : null,
  };
}

/** The confirmations of the planned metrics from the run that measured them. */
function confirmationsOf(night: Night, planned: readonly Planned[], result: RunResult): ConfirmOutcome {
  let records: TrialRecord[];
  try {
    records = readRunDir(result.run_dir).records;
  } catch (error) {
    return confirmed(planned.map((p) => failed(night, p.metric, (error as Error).message, result.run_dir)));
  }
  if (result.stopped) return { kind: 'stopped', reason: `${STOPPED} (${result.stopped.reason})` };
  return confirmed(planned.map((p) => confirmationOf(night, p, result, records)));
}

/**
 * Re-measures the pending metrics of the latest run. Never throws for a workload or file problem:
 * a confirmation that cannot measure comes back with `error` set and the alarm stands.
 */
export async function confirmAlarms(
  latest: RunEntry,
  referenceRun: RunEntry | null,
  pending: readonly GatedMetric[],
  o: ConfirmOptions,
): Promise<ConfirmOutcome> {
  const night: Night = { latest, referenceRun, at: new Date().toISOString() };
  const reads = readRuns(night);
  if ('why' in reads) return confirmed(pending.map((m) => failed(night, m, reads.why)));
  const { planned, unplanned } = plan(night, reads, pending, o.minDrop);
  if (planned.length === 0) return confirmed(unplanned);
  const failAll = (why: string) => confirmed([...unplanned, ...planned.map((p) => failed(night, p.metric, why))]);
  const file = reads.tonight.run.experiment_file;
  const experiment = rerunnable(night, resolvedExperiment(reads.tonight.run), file);
  if ('why' in experiment) return failAll(experiment.why);
  const text = reads.tonight.run.experiment_text;
  const measured = await runPlanned(night, { file, text, experiment, planned }, o);
  if (measured.kind === 'stopped') return measured;
  if (measured.kind === 'failed') return failAll(measured.why);
  const outcome = confirmationsOf(night, planned, measured.result);
  return outcome.kind === 'stopped' ? outcome : confirmed([...unplanned, ...outcome.confirmations]);
}
