// Lowering a batch that failed (the final confirmation, and a later stage whose every config OOMed):
// geometric steps down until one holds, then bisection to the exact boundary. And the per-device
// matrix never calls a config that failed a trial a tie.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deviceMatrix } from '../../../harness/engine/stages/device-matrix.js';
import { lowerBelow, oomWith } from '../../../harness/engine/stages/final-confirm.js';
import { configKey } from '../../../harness/search/space.js';
import type { Outcome, TrialRecord } from '../../../harness/domain/index.js';

function record(index: number, config: Record<string, number>, outcome: Outcome, rate = 100): TrialRecord {
  return {
    index,
    stage: 's',
    role: 'grid',
    config,
    outcome,
    reason: outcome,
    steps: outcome === 'ok' ? [1, 2, 3].map(() => ({ samples: rate, seconds: 1 })) : [],
    node: { host: 'n1', device: 'A100' },
  } as unknown as TrialRecord;
}

describe('lowerBelow', () => {
  it('finds the exact boundary under the failed batch: 200 failed, 128 holds, 136 fails', async () => {
    const ran: number[] = [];
    const low = await lowerBelow({
      m: 8,
      failed: 200,
      budget: 8,
      run: async (b) => {
        ran.push(b);
        return record(ran.length, { batch_size: b }, b <= 128 ? 'ok' : 'oom');
      },
    });
    assert.deepEqual(ran, [168, 136, 112, 120, 128]);
    assert.equal(low.held?.config['batch_size'], 128);
    assert.equal(low.lowestFail, 136);
    assert.equal(low.exact, true);
  });

  it('holds nothing when every lower batch fails within the budget', async () => {
    const low = await lowerBelow({
      m: 8,
      failed: 200,
      budget: 3,
      run: async (b) => record(0, { batch_size: b }, 'oom'),
    });
    assert.equal(low.held, undefined);
    assert.equal(low.exact, false);
  });
});

describe('deviceMatrix', () => {
  it('does not rank a config that OOMed on the device, even beside its ok trials', () => {
    const keyOf = (c: Record<string, unknown>) => configKey(c as Record<string, number>, ['num_workers']);
    const records = [
      record(0, { num_workers: 0 }, 'ok', 100),
      record(1, { num_workers: 0 }, 'ok', 101),
      record(2, { num_workers: 0 }, 'ok', 99),
      record(3, { num_workers: 4 }, 'ok', 300),
      record(4, { num_workers: 4 }, 'ok', 301),
      record(5, { num_workers: 4 }, 'oom'),
    ];
    const [row] = deviceMatrix(records, keyOf, ['num_workers']);
    assert.equal(row!.chosen_key, 'num_workers=0', 'the faster config failed a trial: not a contender');
    assert.match(row!.note!, /only config that ran/);
  });
});

describe('oomWith', () => {
  it('finds a trial that ran out of memory with exactly the config, in any stage', () => {
    const records = [
      record(0, { batch_size: 192, extra: 0 }, 'ok'),
      record(1, { batch_size: 192, extra: 8 }, 'oom'),
      record(2, { batch_size: 192 }, 'oom'),
      record(3, { batch_size: 192, extra: 0 }, 'oom'),
    ];
    assert.equal(oomWith(records, { batch_size: 192, extra: 0 })?.index, 3);
    assert.equal(oomWith(records, { batch_size: 192 })?.index, 2, 'a missing key is a different config');
    assert.equal(oomWith(records, { batch_size: 184, extra: 0 }), undefined);
    assert.equal(oomWith(records.slice(0, 1), { batch_size: 192, extra: 0 }), undefined, 'a pass is not a failure');
  });
});
