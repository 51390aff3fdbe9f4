// What a regression alarm's confirmation runs: where the flagged metric of a run came from (its stage
// and config), and the claim stage that measures that config again beside the reference run's.
import { STAGE_KIND_MODULES } from '../engine/kinds/index.js';
import type { MetricOrigin, Source } from '../engine/kinds/types.js';
import type { SpecOf } from '../experiment/kinds.js';
import { stageName } from '../experiment/checks.js';
import type { ClaimStageSpec, Experiment, StageKind, StageOutcomeOf, StageSpec } from '../experiment/schema.js';
import type { Config, TrialRecord } from '../domain/index.js';
import { keyMetricsWithOrigin } from './index.js';
import type { readRunDir, RunJson } from '../experiment/run-file.js';
import { parseExperimentText } from '../engine/load.js';

/**
 * The fewest interleaved pairs of a confirmation; it runs at least as many pairs as the night ran
 * trials of the metric.
 */
export const CONFIRM_MIN_PAIRS = 5;
const CONFIRM_MAX_PAIRS = 20;

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

/**
 * Where a metric of a run came from: its stage, the config of its trials, how many trials. The metric
 * is found among the run's key metrics by its name, and followed by its typed origin.
 */
export function metricSource(read: RunRead, metric: string): Source | null {
  const result = read.run.result;
  const resolved = resolvedExperiment(read.run);
  if (!result || !resolved) return null;
  const point = keyMetricsWithOrigin(result, read.records).find((m) => m.name === metric);
  if (!point) return null;
  const at = resolved.stages.findIndex((spec, i) => stageName(spec, i) === point.stage);
  const spec = resolved.stages[at];
  const s = result.stages.find((x) => x.name === point.stage);
  if (!spec || !s) return null;
  const configOf = (indices: readonly number[]) =>
    indices.map((i) => read.records.find((r) => r.index === i)).find((r): r is TrialRecord => r !== undefined)
      ?.config ?? null;
  return sourceOfKind(s.kind, s, spec, point.origin, configOf);
}

/** The kind's source of a metric of one stage; null when the spec is of another kind (a changed file). */
function sourceOfKind<K extends StageKind>(
  kind: K,
  s: StageOutcomeOf<K>,
  spec: StageSpec,
  origin: MetricOrigin,
  configOf: (indices: readonly number[]) => Config | null,
): Source | null {
  return spec.kind === kind ? STAGE_KIND_MODULES[kind].source(s, spec as SpecOf<K>, origin, configOf) : null;
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
  // Arms that are commands of their own (tunebench time's) run those commands, not workload.command.
  const before = reference ? (reference.kind === 'config' ? reference.command : undefined) : tonight.command;
  return {
    kind: 'claim',
    ...base,
    claim,
    metric: 'throughput',
    baseline: reference?.config ?? tonight.config,
    candidate: tonight.config,
    ...(tonight.steps !== undefined ? { steps: tonight.steps } : {}),
    ...(before ? { baseline_command: before } : {}),
    ...(tonight.command ? { candidate_command: tonight.command } : {}),
  };
}
