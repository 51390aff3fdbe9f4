// The reference finders follow their documented algorithms.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { powerThenBisect, shrinkOnOom } from '../../../harness/search/reference.js';
import { thresholdWorkload } from '../../support/synthetic.js';

const threshold = (max: number) => thresholdWorkload(max);

describe('reference finders', () => {
  it(
    'power-then-bisect needs about 19 trials from 2 to reach 1000 ' + 'at granularity 1 (Lightning binsearch)',
    async () => {
      const w = threshold(1000);
      const r = await powerThenBisect(w.run, { init: 2, multipleOf: 1, ceiling: 1 << 20 });
      assert.equal(r.max, 1000);
      assert.equal(r.probes, 19);
      assert.deepEqual(w.calls.slice(0, 10), [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
    },
  );

  it('shrink-on-OOM multiplies by 0.9 and returns the first size that runs (Accelerate)', async () => {
    const w = threshold(700);
    const r = await shrinkOnOom(w.run, { start: 1000, multipleOf: 1 });
    assert.deepEqual(w.calls, [1000, 900, 810, 729, 656]);
    assert.equal(r.max, 656);
    assert.equal(r.probes, 5);
  });

  it('power-then-bisect ends at a failure that is not an OOM, with no answer (Lightning raises it)', async () => {
    const calls: number[] = [];
    const w = threshold(1000);
    const r = await powerThenBisect(
      async (batch) => {
        calls.push(batch);
        const out = await w.run(batch, 'probe');
        return batch === 8 ? { ...out, ok: false, outcome: 'timeout' } : out;
      },
      { init: 2, multipleOf: 1, ceiling: 1 << 20 },
    );
    assert.deepEqual(calls, [2, 4, 8]);
    assert.deepEqual(r, { max: null, probes: 3 });
  });

  it('shrink-on-OOM ends at a failure that is not an OOM, with no answer (Accelerate raises it)', async () => {
    const calls: number[] = [];
    const r = await shrinkOnOom(
      async (batch) => {
        calls.push(batch);
        const w = threshold(700);
        const out = await w.run(batch, 'probe');
        return batch < 900 ? { ...out, ok: false, outcome: 'crash' } : out;
      },
      { start: 1000, multipleOf: 1 },
    );
    assert.deepEqual(calls, [1000, 900, 810]);
    assert.deepEqual(r, { max: null, probes: 3 });
  });
});
