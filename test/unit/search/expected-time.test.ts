// The probe planner and the probe-cost model: bisection when outcomes cost the same, a split that moves
// towards cheap failures, and exact answers from the max-batch search that uses them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planProbe } from '../../../harness/search/expected-time.js';
import { findMaxBatch } from '../../../harness/search/max-batch.js';
import { costEstimate, NO_COSTS, withCost } from '../../../harness/search/probe-cost.js';
import { thresholdWorkload } from '../../support/synthetic.js';

const flat = (ok: number, fail: number) => ({ ok: () => ok, fail: () => fail });

/** Expected seconds to close (lo, hi) by always probing at `pick`, the max uniform in [lo, hi). */
function expectedBy(
  lo: number,
  hi: number,
  ok: number,
  fail: number,
  pick: (lo: number, hi: number) => number,
): number {
  let total = 0;
  for (let max = lo; max < hi; max++) {
    let [a, b] = [lo, hi];
    while (b - a > 1) {
      const x = pick(a, b);
      if (x <= max) {
        total += ok;
        a = x;
      } else {
        total += fail;
        b = x;
      }
    }
  }
  return total / (hi - lo);
}

describe('planProbe', () => {
  it('bisects when a run and a failure cost the same and nothing is known of the max', () => {
    for (const [lo, hi] of [
      [0, 2],
      [3, 11],
      [10, 74],
      [100, 1000],
    ] as const) {
      const { k } = planProbe({ lo, hi, cost: flat(1, 1) });
      const mid = (lo + hi) / 2;
      // Within a bracket of equal-cost outcomes many splits tie; a coarse grid may take any of them near the middle.
      assert.ok(Math.abs(k - mid) <= 1 + (hi - lo) / 8, `(${lo}, ${hi}) -> ${k}`);
    }
  });

  it('moves the split up when a failure is cheaper than a run, and lowers the expected time', () => {
    const { k, expectedSeconds } = planProbe({ lo: 0, hi: 64, cost: flat(4, 1) });
    assert.ok(k > 40, `split at ${k} of (0, 64)`);
    const bisect = expectedBy(0, 64, 4, 1, (a, b) => Math.floor((a + b) / 2));
    const planned = expectedBy(0, 64, 4, 1, (a, b) => planProbe({ lo: a, hi: b, cost: flat(4, 1) }).k);
    assert.ok(planned < 0.9 * bisect, `planned ${planned.toFixed(2)} s against bisection ${bisect.toFixed(2)} s`);
    // Its own estimate is the expectation it achieves (the grid is exact below 96 points).
    assert.ok(Math.abs(expectedSeconds - planned) < 1e-9, `${expectedSeconds} vs ${planned}`);
  });

  it('moves the split down when a failure costs more than a run', () => {
    const { k } = planProbe({ lo: 0, hi: 64, cost: flat(1, 4) });
    assert.ok(k < 24, `split at ${k} of (0, 64)`);
  });

  it('plans a wide bracket on a coarse grid quickly, and refuses a closed one', () => {
    const started = Date.now();
    const wide = planProbe({ lo: 1, hi: 1_000_000, cost: flat(3, 1) });
    assert.ok(wide.k > 1 && wide.k < 1_000_000);
    assert.ok(Date.now() - started < 2000);
    assert.throws(() => planProbe({ lo: 4, hi: 5, cost: flat(1, 1) }), /already closed/);
  });
});

describe('probe costs', () => {
  it('fits seconds against batch per outcome, and assumes no asymmetry without evidence', () => {
    let costs = NO_COSTS;
    assert.equal(costEstimate(costs).ok(100), 1);
    costs = withCost(costs, 100, true, 1.5);
    costs = withCost(costs, 1000, true, 6);
    const one = costEstimate(costs);
    assert.ok(Math.abs(one.ok(500) - 3.5) < 1e-9);
    assert.equal(one.fail(500), one.ok(500));
    costs = withCost(costs, 2000, false, 0.8);
    costs = withCost(costs, 4000, false, 0.9);
    costs = withCost(costs, 8000, false, null);
    assert.equal(costs.failed.length, 2);
    const both = costEstimate(costs);
    assert.ok(both.fail(3000) < 1 && both.ok(3000) > 10);
  });
});

describe('findMaxBatch with costs', () => {
  it('stays exact when failures are cheap and the memory readings are missing', async () => {
    for (const truth of [8, 96, 1000, 4096, 77_777]) {
      const { run, calls } = thresholdWorkload(truth, (batch, ok) => (ok ? 1 + batch / 1000 : 0.2));
      const r = await findMaxBatch(run, {
        multipleOf: 8,
        start: 8,
        ceiling: 1 << 20,
        capBytes: null,
        headroom: 0.1,
        tolerance: 0.05,
        throughputPoints: 0,
        confirmSteps: 0,
      });
      const want = Math.floor(truth / 8) * 8;
      assert.equal(r.max, want);
      assert.equal(r.status, 'exact');
      assert.ok(calls.includes(want) && calls.includes(want + 8), `${truth}: ${calls.join(' ')}`);
    }
  });
});
