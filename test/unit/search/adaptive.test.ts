// Adaptive repetition on synthetic pairs with known rates and seeded noise.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adaptivePairs, type PairRunner } from '../../../harness/search/adaptive.js';
import { createRng } from '../../../harness/stats/rng.js';

function runner(rateA: number, rateB: number, noise: number, seed: number): { run: PairRunner; order: string[] } {
  const rng = createRng(seed);
  const order: string[] = [];
  const run: PairRunner = async (side, pair) => {
    order.push(`${side}${pair}`);
    const rate = side === 'a' ? rateA : rateB;
    return Array.from({ length: 10 }, () => ({ samples: 100, seconds: 100 / (rate * (1 + noise * (rng() * 2 - 1))) }));
  };
  return { run, order };
}

describe('adaptivePairs', () => {
  it('alternates the order within pairs and decides a clear 10% slowdown early', async () => {
    const { run, order } = runner(1000, 900, 0.01, 1);
    const r = await adaptivePairs(run, { minPairs: 5, maxPairs: 20 });
    assert.equal(r.stoppedBy, 'change');
    assert.equal(r.decision.direction, 'lower');
    assert.equal(r.pairs, 5, 'decided at the first look');
    assert.deepEqual(order.slice(0, 4), ['a0', 'b0', 'b1', 'a1']);
    assert.ok(Math.abs(r.ratio!.estimate - 0.9) < 0.01);
  });

  it('stops early when identical arms are shown equivalent within the band', async () => {
    const { run } = runner(1000, 1000, 0.002, 2);
    const r = await adaptivePairs(run, { minPairs: 5, maxPairs: 20 });
    assert.equal(r.stoppedBy, 'equivalent');
    assert.equal(r.decision.direction, 'same');
  });

  it('keeps adding pairs while noise hides a small change, up to the budget', async () => {
    const { run, order } = runner(1000, 980, 0.3, 3);
    const r = await adaptivePairs(run, { minPairs: 5, maxPairs: 8 });
    assert.equal(r.stoppedBy, 'budget');
    assert.equal(r.pairs, 8);
    assert.equal(order.length, 16);
  });

  it('stops when a trial fails', async () => {
    let n = 0;
    const r = await adaptivePairs(async () => (++n === 3 ? null : [{ samples: 1, seconds: 1 }]), { minPairs: 2, maxPairs: 5 });
    assert.equal(r.stoppedBy, 'failed');
  });
});
