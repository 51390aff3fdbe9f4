// What a regression alarm's confirmation runs: where the flagged metric of a run came from (its stage
// and config), and the claim stage that measures that config again beside the reference run's.
import { stageName } from '../experiment/checks.js';
import { parseExperimentText } from '../experiment/load.js';
import type { ClaimStageSpec, Experiment } from '../experiment/schema.js';
import type { readRunDir } from '../store/read-run.js';
import type { Config, RunJson, TrialRecord } from '../domain/index.js';

/**
 * The fewest interleaved pairs of a confirmation; it runs at least as many pairs as the night ran
 * trials of the metric.
 */
export const CONFIRM_MIN_PAIRS = 5;
const CONFIRM_MAX_PAIRS = 20;

/** What to run again for a metric: a config of tonight's and the reference's run, or a claim stage. */
export type Source =
  | {
      kind: 'config';
      config: Config;
      trials: number;
      /** The `steps` of the stage that measured the config, given to the confirmation stage. */
      steps: number | undefined;
    }
  | { kind: 'claim'; stage: ClaimStageSpec; config: Config; trials: number };

export type RunRead = ReturnType<typeof readRunDir>;

/**
 * The experiment a run ran, as resolved when it started, checked again by the experiment schema;
 * null when it no longer validates.
 */
export function resolvedExperiment(run: RunJson): Experiment | null {
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
    const steps = spec.steps;
    if (s.kind === 'sweep') {
      const r = s.result;
      const row = r.configs.find((c) => c.key === r.chosen_key);
      if (row && metric === `${name} samples/s (chosen config)`)
        return { kind: 'config', config: row.config, trials: row.trials.length, steps };
    } else if (s.kind === 'compare') {
      const r = s.result;
      const arm = r.arms.find((a) => metric === `${name} samples/s ${r.param}=${String(a.value)}`);
      const config = arm && configOf(arm.trials);
      if (arm && config) return { kind: 'config', config, trials: arm.trials.length, steps };
    } else if (s.kind === 'max-batch') {
      const r = s.result;
      const ev = s.evidence[r.param];
      const config = ev && configOf(ev.trials);
      if (config && metric === `${name} samples/s (chosen batch)`)
        return { kind: 'config', config, trials: ev.trials.length, steps };
    } else if (s.kind === 'claim' && spec.kind === 'claim' && metric === `${name} speedup`) {
      const r = s.result;
      return { kind: 'claim', stage: spec, config: r.candidate, trials: r.pairs };
    }
  }
  return null;
}

export const sameConfig = (a: Config, b: Config) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => a[k] === b[k]);
};

export interface ConfirmStageOptions {
  metric: string;
  /** The stage's place among the confirmations of one run (its name is confirm-<n>). */
  n: number;
  tonight: Source;
  reference: Source | null;
  minDrop: number;
}

/** The claim stage that re-measures one metric: tonight's config against the reference run's, interleaved. */
export function confirmStage({ metric, n, tonight, reference, minDrop }: ConfirmStageOptions): ClaimStageSpec {
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
      ...tonight.stage,
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
    ...(tonight.steps !== undefined ? { steps: tonight.steps } : {}),
  };
}
