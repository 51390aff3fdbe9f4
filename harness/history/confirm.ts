// The confirmation of a regression alarm, as Chromium's Pinpoint does it: before `history` fails a
// night, the flagged metric's config is measured again with more trials in fresh processes,
// interleaved with the config of the reference level's latest run, through a claim stage of the same
// experiment (its own run directory under <history-out>/<experiment>/confirm/). The re-measured value
// (the metric's own estimator: geometric mean of per-trial samples/s, or the claim's speedup) then
// replaces the night's value and the gate tests it again.
import { existsSync } from 'node:fs';
import { runExperiment } from '../engine/run-experiment.js';
import type { Progress } from '../engine/progress.js';
import { stageName } from '../experiment/checks.js';
import { parseExperimentText } from '../experiment/load.js';
import type { ClaimStageSpec, Experiment, StageSpec } from '../experiment/schema.js';
import { readRunDir } from '../store/read-run.js';
import { ratioThroughput } from '../stats/throughput.js';
import type { RunEntry } from './index.js';
import type { Confirmation, GatedMetric } from './series-gate.js';
import type { Config, RunJson, RunResult, TrialRecord } from '../domain/index.js';

/** How a confirmation stopped by a signal begins its error. */
export const STOPPED_PREFIX = 'the confirmation run was stopped';

/**
 * The fewest interleaved pairs of a confirmation; it runs at least as many pairs as the night ran
 * trials of the metric.
 */
export const CONFIRM_MIN_PAIRS = 5;
const CONFIRM_MAX_PAIRS = 20;

interface Source {
  /** What to run: a config of tonight's and the reference's run, or a claim stage again. */
  kind: 'config' | 'claim';
  stage: StageSpec;
  config: Config;
  trials: number;
}

type RunRead = ReturnType<typeof readRunDir>;

/**
 * The experiment a run ran, as resolved when it started, checked again by the experiment schema;
 * null when it no longer validates.
 */
function resolvedExperiment(run: RunJson): Experiment | null {
  try {
    return parseExperimentText(JSON.stringify(run.resolved), run.experiment_file, 'json');
  } catch {
    return null;
  }
}

/** Where a metric of a run came from: its stage, the config of its trials, how many trials. */
export function metricSource(read: RunRead, metric: string): Source | null {
  const result = read.run.result;
  const resolved = resolvedExperiment(read.run);
  if (!result || !resolved) return null;
  const configOf = (indices: readonly number[]) =>
    indices.map((i) => read.records.find((r) => r.index === i)).find((r): r is TrialRecord => r !== undefined)
      ?.config ?? null;
  for (const [i, spec] of resolved.stages.entries()) {
    const name = stageName(spec, i);
    const s = result.stages.find((x) => x.name === name);
    if (!s || !metric.startsWith(`${name} `)) continue;
    if (s.kind === 'sweep') {
      const r = s.result;
      const row = r.configs.find((c) => c.key === r.chosen_key);
      if (row && metric === `${name} samples/s (chosen config)`)
        return { kind: 'config', stage: spec, config: row.config, trials: row.trials.length };
    } else if (s.kind === 'compare') {
      const r = s.result;
      const arm = r.arms.find((a) => metric === `${name} samples/s ${r.param}=${String(a.value)}`);
      const config = arm && configOf(arm.trials);
      if (arm && config) return { kind: 'config', stage: spec, config, trials: arm.trials.length };
    } else if (s.kind === 'max-batch') {
      const r = s.result;
      const ev = s.evidence[r.param];
      const config = ev && configOf(ev.trials);
      if (config && metric === `${name} samples/s (chosen batch)`)
        return { kind: 'config', stage: spec, config, trials: ev.trials.length };
    } else if (s.kind === 'claim' && metric === `${name} speedup`) {
      const r = s.result;
      return { kind: 'claim', stage: spec, config: r.candidate, trials: r.pairs };
    }
  }
  return null;
}

const sameConfig = (a: Config, b: Config) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
};

/** The claim stage that re-measures one metric: tonight's config against the reference run's, interleaved. */
function confirmStage(
  metric: string,
  n: number,
  tonight: Source,
  reference: Source | null,
  steps: number | undefined,
  minDrop: number,
): ClaimStageSpec {
  const pairs = Math.min(CONFIRM_MAX_PAIRS, Math.max(CONFIRM_MIN_PAIRS, tonight.trials));
  const base = {
    name: `confirm-${n}`,
    source: `tunebench history: confirmation of ${metric}`,
    min_pairs: pairs,
    max_pairs: pairs,
    budget: {},
    tolerance: 0.2,
    noise_band: 0.01,
    warmup_trials: 0,
  };
  if (tonight.kind === 'claim')
    return {
      ...(tonight.stage as ClaimStageSpec),
      ...base,
      min_pairs: Math.max(pairs, tonight.trials),
      max_pairs: Math.max(pairs, tonight.trials),
    };
  // Whether tonight's config is slower than the reference's, measured side by side now: the verdict
  // tells a tuner's worse choice apart from a slower machine or code (same config, or no difference).
  const claim = `>=${Math.max(1, Math.round(100 * minDrop))}% slower`;
  return {
    kind: 'claim',
    ...base,
    claim,
    metric: 'throughput',
    baseline: reference?.config ?? tonight.config,
    candidate: tonight.config,
    ...(steps !== undefined ? { steps } : {}),
  };
}

const throughputs = (records: readonly TrialRecord[], indices: readonly number[]) =>
  indices
    .map((i) => records.find((r) => r.index === i))
    .filter((r): r is TrialRecord => r?.outcome === 'ok')
    .map((r) => ratioThroughput(r.steps))
    .filter((v): v is number => v !== null && v > 0);

export interface ConfirmOptions {
  /** Where the confirmation's run directory goes. */
  outDir: string;
  progress: Progress;
  signal?: AbortSignal;
  minDrop: number;
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
): Promise<Confirmation[]> {
  const at = new Date().toISOString();
  const failed = (m: GatedMetric, error: string, runDir: string | null = null): Confirmation => ({
    run_id: latest.run_id,
    metric: m.name,
    at,
    value: null,
    trials: 0,
    reference_run: referenceRun?.run_id ?? latest.run_id,
    same_config: true,
    config_ratio: null,
    run_dir: runDir,
    error,
  });
  let tonightRead: RunRead;
  let refRead: RunRead | null = null;
  try {
    tonightRead = readRunDir(latest.dir);
    if (referenceRun) refRead = readRunDir(referenceRun.dir);
  } catch (error) {
    return pending.map((m) => failed(m, (error as Error).message));
  }
  const tonightRun = tonightRead.run;
  const tonightExperiment = resolvedExperiment(tonightRun);
  const planned: { metric: GatedMetric; stage: ClaimStageSpec; tonight: Source; same: boolean }[] = [];
  const out: Confirmation[] = [];
  for (const m of pending) {
    const tonight = metricSource(tonightRead, m.name);
    if (!tonight) {
      out.push(failed(m, `cannot tell which config measured ${m.name} in ${latest.dir}`));
      continue;
    }
    const reference = refRead ? metricSource(refRead, m.name) : null;
    const steps = (tonight.stage as { steps?: number }).steps;
    const stage = confirmStage(m.name, planned.length + 1, tonight, reference, steps, o.minDrop);
    planned.push({
      metric: m,
      stage,
      tonight,
      same: tonight.kind === 'claim' || !reference || sameConfig(tonight.config, reference.config),
    });
  }
  if (planned.length === 0) return out;
  const file = tonightRun.experiment_file;
  if (!tonightExperiment) {
    return [
      ...out,
      ...planned.map((p) =>
        failed(
          p.metric,
          `the experiment that run ${latest.run_id} ran (run.json "resolved") ` +
            'does not validate with this tunebench, so its trials cannot be run again; run history with --no-confirm',
        ),
      ),
    ];
  }
  if (!existsSync(file)) {
    return [
      ...out,
      ...planned.map((p) =>
        failed(
          p.metric,
          `the experiment file ${file} of run ${latest.run_id} is gone, so its trials cannot be run again; ` +
            'restore it or run history with --no-confirm',
        ),
      ),
    ];
  }
  let result: RunResult;
  try {
    o.progress.note(
      `confirming ${planned.length} regression alarm(s) ` +
        `of ${latest.experiment} run ${latest.run_id}: ${planned.map((p) => p.metric.name).join(', ')}`,
    );
    result = await runExperiment({
      experimentPath: file,
      outDir: o.outDir,
      progress: o.progress,
      ...(o.signal ? { signal: o.signal } : {}),
      adjust: (e) => {
        // Tonight's experiment as it ran (run.json), not the file as it may have been edited since.
        Object.assign(e, structuredClone(tonightExperiment), { stages: planned.map((p) => p.stage) });
      },
    });
  } catch (error) {
    const why = o.signal?.aborted
      ? `${STOPPED_PREFIX} (${(error as Error).message})`
      : `the confirmation run failed: ${(error as Error).message}`;
    return [...out, ...planned.map((p) => failed(p.metric, why))];
  }
  let records: TrialRecord[];
  try {
    records = readRunDir(result.run_dir).records;
  } catch (error) {
    return [...out, ...planned.map((p) => failed(p.metric, (error as Error).message, result.run_dir))];
  }
  for (const p of planned) {
    const s = result.stages.find((x) => x.name === p.stage.name);
    const summary = s?.kind === 'claim' ? s.result : undefined;
    if (!summary || result.stopped) {
      out.push(
        failed(
          p.metric,
          result.stopped ? `${STOPPED_PREFIX} (${result.stopped.reason})` : 'the confirmation stage did not run',
          result.run_dir,
        ),
      );
      continue;
    }
    let value: number | null;
    let trials: number;
    if (p.tonight.kind === 'claim') {
      value = summary.speedup?.estimate ?? null;
      trials = summary.pairs;
    } else {
      const v = throughputs(
        records,
        p.same ? [...summary.trials.candidate, ...summary.trials.baseline] : summary.trials.candidate,
      );
      // The geometric mean of per-trial samples/s: the estimate of the sweep's and compare's intervals.
      value = v.length > 0 ? Math.exp(v.reduce((a, x) => a + Math.log(x), 0) / v.length) : null;
      trials = v.length;
    }
    const ratio =
      !p.same && summary.speedup
        ? { estimate: summary.speedup.estimate, low: summary.speedup.low, high: summary.speedup.high }
        : null;
    out.push({
      run_id: latest.run_id,
      metric: p.metric.name,
      at,
      value: value !== null && Number.isFinite(value) && value > 0 ? value : null,
      trials,
      reference_run: referenceRun?.run_id ?? latest.run_id,
      same_config: p.same,
      config_ratio: ratio,
      run_dir: result.run_dir,
      error: value === null ? `no trial of the confirmation measured ${p.metric.name} (${summary.reason})` : null,
    });
  }
  return out;
}
