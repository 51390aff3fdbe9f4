// The max-batch stage kind: the largest batch that fits, then the answers read off its probes.
import { checkMaxBatch } from '../../experiment/checks.js';
import type { MaxBatchStageSpec } from '../../experiment/schema.js';
import type { Known } from '../../experiment/kinds.js';
import { maxBatchChart } from '../../report/charts/max-batch.js';
import { lastOk } from '../../report/charts/index.js';
import { maxBatchBlocks } from '../../report/tables.js';
import { maxBatchAnswer } from '../../report/answers.js';
import { groupsByConfig } from '../stages/lower-after-failure.js';
import { runMaxBatchStage } from '../stages/max-batch.js';
import type { KindMetric, StageKindModule } from './types.js';

/** The parameters a probe sets: the searched one, the bucket, and the accumulation steps of a recipe. */
function varied(stage: MaxBatchStageSpec): Map<string, Known> {
  const out = new Map<string, Known>([[stage.param, { always: true }]]);
  // Every probe of a bucketed stage sets the bucket; with a recipe, probes run with 1 accumulation step.
  if (stage.buckets) out.set(stage.buckets.param, { always: true });
  if (stage.keep_effective_batch !== undefined) out.set(stage.accumulation_param, { always: true });
  return out;
}

export const maxBatchKind: StageKindModule<'max-batch'> = {
  check: checkMaxBatch,
  use: (stage) => ({
    runs: [{ varied: varied(stage), commands: [], usesDefault: true }],
    passesOn: true,
    values: [],
    conditional: [],
  }),
  run: runMaxBatchStage,
  plannedTrials: (stage) =>
    10 +
    (stage.confirm_steps > 0 ? 1 : 0) +
    2 * stage.repeat_boundary +
    stage.throughput_points +
    (stage.choose === 'max' ? 0 : 1),
  // Its workload broke, or nothing fits (its smallest probe ran out of memory): later stages have no batch.
  failed: (o) => o.result.status === 'failed' || o.result.status === 'none-fits',
  failureAtBatch: { groups: groupsByConfig, wholeConfigs: false, lightest: () => null },
  blocks: maxBatchBlocks,
  answer: maxBatchAnswer,
  charts: (name, r, own) => ({
    charts: [maxBatchChart(name, r, own)],
    representative:
      lastOk(own.filter((t) => t.role.kind === 'confirm')) ??
      lastOk(own.filter((t) => Number(t.config[r.param]) === r.max)),
  }),
  keyMetrics: (s) => {
    const r = s.result;
    const out: KindMetric[] = [];
    if (r.max !== null)
      out.push({
        what: `max ${r.param}`,
        origin: { kind: 'max' },
        unit: 'samples',
        value: r.max,
        low: null,
        high: null,
      });
    // One probe has no CI; runs written by earlier versions stored a single-trial interval: its estimate is the point.
    const point = s.evidence[r.param]?.point ?? s.evidence[r.param]?.samples_per_second?.estimate;
    if (point !== undefined)
      out.push({
        what: 'samples/s (chosen batch)',
        origin: { kind: 'chosen-batch' },
        value: point,
        low: null,
        high: null,
      });
    return out;
  },
  source: (s, spec, origin, configOf) => {
    const ev = s.evidence[s.result.param];
    const config = origin.kind === 'chosen-batch' && ev ? configOf(ev.trials) : null;
    return ev && config ? { kind: 'config', config, trials: ev.trials.length, steps: spec.steps } : null;
  },
};
