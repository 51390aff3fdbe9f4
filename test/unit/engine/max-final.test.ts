// The max against the config that is written (issue 44): a max found with num_workers=0 is a max for that
// config; when a later stage changes the workers, the report says whether the max ran with the written
// settings (held, ran out of memory) or was never measured with them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxAgainstFinal } from '../../../harness/engine/stages/final-confirm.js';
import { maxFinalStatement } from '../../../harness/report/max-batch-blocks.js';
import type { MaxBatchSummary, Outcome, TrialRecord } from '../../../harness/domain/index.js';

function record(index: number, config: Record<string, number | boolean>, outcome: Outcome, steps = 8): TrialRecord {
  return {
    index,
    stage: 'mb',
    role: 'final-confirm',
    config,
    outcome,
    steps: outcome === 'ok' ? Array.from({ length: steps }, () => ({ samples: 1, seconds: 1 })) : [],
  } as unknown as TrialRecord;
}

const summary = (max: number | null, foundWith: Record<string, number | boolean>) =>
  ({
    max,
    survived: {
      max:
        max === null
          ? undefined
          : { batch: max, trial: 3, steps: 8, epoch_boundaries: 1, config: foundWith, statement: '' },
    },
  }) as unknown as MaxBatchSummary;

const spec = { param: 'batch_size', confirm_steps: 4 };
const found = { num_workers: 0, prefetch_factor: 2 };
const written = { num_workers: 1, prefetch_factor: 4, pin_memory: true, batch_size: 88 };

describe('maxAgainstFinal', () => {
  it('says the max was not measured with the written loader settings when nothing ran it there', () => {
    const f = maxAgainstFinal([record(7, { ...written }, 'ok')], summary(104, found), written, spec)!;
    assert.equal(f.outcome, 'not-measured');
    assert.deepEqual(f.found_with, { num_workers: 0, prefetch_factor: 2 });
    assert.deepEqual(f.written, { num_workers: 1, prefetch_factor: 4, pin_memory: true });
    assert.equal(f.trial, null);
    const s = maxFinalStatement({ max_final: f });
    assert.match(s, /^max 104 was found with num_workers=0, prefetch_factor=2, pin_memory unset; it was not measured/);
    assert.match(s, /the written num_workers=1, prefetch_factor=4, pin_memory=true/);
  });

  it('counts an OOM of the max with the written settings as a failure, whatever else passed', () => {
    const at = { ...written, batch_size: 104 };
    const records = [record(5, at, 'ok'), record(9, at, 'oom')];
    const f = maxAgainstFinal(records, summary(104, found), written, spec)!;
    assert.deepEqual([f.outcome, f.trial], ['failed', 9]);
    assert.match(
      maxFinalStatement({ max_final: f }),
      /ran out of memory \(trial 9\): it is not a max for the written config/,
    );
  });

  it('calls the max confirmed only after a confirmation-length pass with exactly the written settings', () => {
    const at = { ...written, batch_size: 104 };
    // Two steps are fewer than confirm_steps; a run with other workers is another config.
    const short = [record(4, at, 'ok', 2), record(5, { ...at, num_workers: 2 }, 'ok')];
    assert.equal(maxAgainstFinal(short, summary(104, found), written, spec)!.outcome, 'not-measured');
    const f = maxAgainstFinal([...short, record(6, at, 'ok')], summary(104, found), written, spec)!;
    assert.deepEqual([f.outcome, f.trial], ['confirmed', 6]);
  });

  it('says nothing when the written config changed nothing the max ran with', () => {
    assert.equal(
      maxAgainstFinal([], summary(104, { num_workers: 1 }), { num_workers: 1, batch_size: 88 }, spec),
      undefined,
    );
    assert.equal(maxAgainstFinal([], summary(null, found), written, spec), undefined);
  });
});
