// predicted_by: an earlier stage's memory line applied to this stage's device, and the measured max
// recorded beside it (and on the earlier stage's card row of the same size).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { confirmPrediction, predictionHere } from '../../../harness/engine/stages/confirm-prediction.js';
import type { StageInput } from '../../../harness/engine/context.js';
import type { MaxBatchStageSpec } from '../../../harness/experiment/schema.js';
import type { MaxBatchResult } from '../../../harness/search/max-batch.js';
import { CARDS } from '../../../harness/search/recipe.js';
import type { MaxBatchSummary } from '../../../harness/domain/index.js';
import type { StageOutcomeOf } from '../../../harness/experiment/schema.js';
import { notesText } from '../../support/notes.js';

const MIB = 2 ** 20;
/** 2 GiB fixed + 200 MiB per sample: 392 fits 80 GiB, 192 fits 40 GiB (multiples of 8). */
function earlier(): StageOutcomeOf<'max-batch'> {
  return {
    name: 'a100-80',
    kind: 'max-batch',
    chosen: { batch_size: 392 },
    evidence: {},
    notes: [],
    result: {
      predictions: {
        quantity: 'device memory',
        fixed_bytes: 2048 * MIB,
        per_sample_bytes: 200 * MIB,
        rows: CARDS.map((c) => ({ card: c.card, bytes: c.bytes, predicted: null, rule_of_thumb: 0 })),
        statement: 'predictions',
      },
    } as MaxBatchSummary,
  };
}

const spec = { multiple_of: 8, ceiling: 1 << 20 } as MaxBatchStageSpec;
function ctx(gpu: number | null, memory?: number): StageInput {
  return {
    experiment: { limits: memory === undefined ? {} : { memory } },
    device: { host: 'node7', name: gpu === null ? 'CPU: Xeon' : 'NVIDIA A100-SXM4-40GB', gpu_memory_bytes: gpu },
    outcomes: [earlier()],
  } as unknown as StageInput;
}

const result = (max: number, status: MaxBatchResult['status'] = 'exact') =>
  ({ max, status, probesToMax: 3, notes: [] }) as unknown as MaxBatchResult;

describe('predicted_by', () => {
  it("predicts this device's max from the earlier stage's line: GPU memory, else limits.memory", () => {
    assert.equal(predictionHere(ctx(40960 * MIB), spec, 'a100-80').predicted, 192);
    assert.equal(predictionHere(ctx(null, 24 * 2 ** 30), spec, 'a100-80').predicted, 112);
    const unknown = predictionHere(ctx(null), spec, 'a100-80');
    assert.equal(unknown.memoryBytes, null);
    assert.equal(unknown.predicted, null);
    assert.throws(() => predictionHere(ctx(40960 * MIB), spec, 'nope'), /no max-batch stage "nope" ran before/);
  });

  it('chooses nothing, records predicted against measured, and fills the matching card row', () => {
    const c = ctx(40960 * MIB);
    const target = predictionHere(c, spec, 'a100-80');
    const out = confirmPrediction(target, 'a100-40', { chosen: 184 } as MaxBatchSummary, result(192));
    assert.deepEqual(out.chosen, {});
    assert.deepEqual(out.evidence, {});
    assert.equal(out.result.chosen, null);
    assert.deepEqual(out.result.device_confirmation, {
      of_stage: 'a100-80',
      device: 'NVIDIA A100-SXM4-40GB',
      host: 'node7',
      memory_bytes: 40960 * MIB,
      predicted: 192,
      measured: 192,
      status: 'exact',
      probes: 3,
    });
    const rows = target.of.result.predictions!.rows;
    assert.deepEqual(
      rows.filter((r) => r.measured !== undefined).map((r) => [r.card, r.measured]),
      [['40 GB', 192]],
    );
    assert.match(notesText(out.notes), /a100-80 predicted 192 on NVIDIA A100-SXM4-40GB, measured 192/);
  });

  it('leaves the card rows alone when no card is within 3% of the device, or the max is not exact', () => {
    const odd = predictionHere(ctx(32 * 2 ** 30), spec, 'a100-80');
    confirmPrediction(odd, 'x', {} as MaxBatchSummary, result(152));
    assert.ok(odd.of.result.predictions!.rows.every((r) => r.measured === undefined));
    const ceiling = predictionHere(ctx(81559 * MIB), spec, 'a100-80');
    confirmPrediction(ceiling, 'x', {} as MaxBatchSummary, result(64, 'ceiling'));
    assert.ok(ceiling.of.result.predictions!.rows.every((r) => r.measured === undefined));
    const h100 = predictionHere(ctx(81559 * MIB), spec, 'a100-80');
    confirmPrediction(h100, 'x', {} as MaxBatchSummary, result(384));
    assert.deepEqual(
      h100.of.result.predictions!.rows.filter((r) => r.measured !== undefined).map((r) => r.card),
      ['80 GB'],
    );
  });
});
