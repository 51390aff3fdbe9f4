// A max-batch stage with predicted_by: an earlier stage's memory line applied to this stage's device
// guides the search, and the exact max measured here is recorded beside the prediction.
import type { Frozen } from '../../util/frozen.js';
import { ConfigError } from '../../errors.js';
import type { MaxBatchStageSpec } from '../../experiment/schema.js';
import type { MaxBatchResult } from '../../search/max-batch.js';
import { matchingCard, predictMax } from '../../search/recipe.js';
import type { StageInput } from '../context.js';
import type { DeviceConfirmation, MaxBatchSummary, StageNote } from '../../domain/index.js';
import type { StageOutcomeOf } from '../../experiment/schema.js';

export interface PredictionHere {
  /** The earlier stage's outcome, whose card row gets the measured max. */
  of: StageOutcomeOf<'max-batch'>;
  device: string;
  host: string;
  memoryBytes: number | null;
  predicted: number | null;
}

/**
 * predicted_by: the earlier stage's memory line applied to this stage's device (its GPU memory;
 * without a GPU, limits.memory).
 */
export function predictionHere(input: StageInput, spec: Frozen<MaxBatchStageSpec>, from: string): PredictionHere {
  const of = input.outcomes.find((o): o is StageOutcomeOf<'max-batch'> => o.kind === 'max-batch' && o.name === from);
  // checks.ts makes sure of it; a run.json edited by hand could still lack it.
  if (!of) throw new ConfigError(`predicted_by: no max-batch stage ${JSON.stringify(from)} ran before this one`);
  const device = input.device;
  const memoryBytes = device?.gpu_memory_bytes ?? input.experiment.limits.memory ?? null;
  const line = of.result.predictions;
  const predicted =
    line && memoryBytes !== null
      ? predictMax(line.fixed_bytes, line.per_sample_bytes, memoryBytes, spec.multiple_of)
      : null;
  return {
    of,
    device: device?.name ?? 'unknown',
    host: device?.host ?? 'unknown',
    memoryBytes,
    predicted: predicted === null ? null : Math.min(predicted, spec.ceiling),
  };
}

/**
 * A stage that confirms another card's prediction chooses nothing: its max is a measurement on this
 * device, recorded beside the prediction, and on the earlier stage's card row of the same size.
 */
export function confirmPrediction(
  t: PredictionHere,
  name: string,
  summary: MaxBatchSummary,
  result: MaxBatchResult,
): StageOutcomeOf<'max-batch'> {
  const confirmation: DeviceConfirmation = {
    of_stage: t.of.name,
    device: t.device,
    host: t.host,
    memory_bytes: t.memoryBytes,
    predicted: t.predicted,
    measured: result.max,
    status: result.status,
    probes: result.probesToMax,
  };
  const row = t.memoryBytes === null ? undefined : matchingCard(t.of.result.predictions?.rows ?? [], t.memoryBytes);
  if (row && result.status === 'exact') row.measured = result.max;
  const verdict: StageNote = {
    kind: 'prediction-measured',
    of_stage: t.of.name,
    device: t.device,
    predicted: t.predicted,
    measured: result.max,
    status: result.status,
  };
  return {
    name,
    kind: 'max-batch',
    chosen: {},
    evidence: {},
    notes: [...result.notes, verdict],
    result: {
      ...summary,
      chosen: null,
      choose_rule: `this stage confirms ${t.of.name}'s prediction on ${t.device} (predicted_by); the config is the other stages'`,
      device_confirmation: confirmation,
    },
  };
}
