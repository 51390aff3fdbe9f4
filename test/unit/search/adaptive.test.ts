// Sequential pairs: looks only at the planned sample sizes, stops at a decision, a final look with
// the alpha left when the budget ends between looks; and the claim loop on synthetic pairs with
// known rates and seeded noise.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runPairs, type PairLook } from '../../../harness/search/adaptive.js';
import { runClaimPairs } from '../../../harness/search/claim.js';
import { parseClaim } from '../../../harness/stats/claim.js';
import { createRng } from '../../../harness/stats/rng.js';
import { lookPlan } from '../../../harness/stats/sequential.js';

/** A trial function that records the order it ran in and always succeeds. */
function recorder(): { run: (side: 'a' | 'b', pair: number) => Promise<boolean>; order: string[] } {
  const order: string[] = [];
  return { run: async (side, pair) => (order.push(`${side}${pair}`), true), order };
}

/** Values at `rate` (baseline) and `rate * effect` (candidate) with +/-`noise` seeded jitter. */
function synthetic(effect: number, noise: number, seed: number, rate = 1000) {
  const rng = createRng(seed);
  const calls: string[] = [];
  const run = async (side: 'baseline' | 'candidate', pair: number): Promise<number | null> => {
    calls.push(`${side}${pair}`);
    return (side === 'baseline' ? rate : rate * effect) * (1 + noise * (rng() * 2 - 1));
  };
  return { run, calls };
}

describe('runPairs', () => {
  it('runs A B, B A, ... and looks only at the planned sizes 5, 7, 10, 14, 20', async () => {
    const { run, order } = recorder();
    const looks: PairLook[] = [];
    const r = await runPairs(run, (l) => (looks.push(l), { result: l.n, decided: false }), {
      minPairs: 5,
      maxPairs: 20,
    });
    assert.deepEqual(order.slice(0, 6), ['a0', 'b0', 'b1', 'a1', 'a2', 'b2']);
    assert.equal(order.length, 40);
    assert.deepEqual(
      looks.map((l) => l.n),
      [5, 7, 10, 14, 20],
    );
    assert.deepEqual(
      looks.map((l) => l.final),
      [false, false, false, false, true],
    );
    // Each look spends its share of the plan; together they spend exactly alpha.
    const plan = lookPlan(5, 20);
    looks.forEach((l, i) => assert.ok(Math.abs(l.alpha - plan[i]!.alpha) < 1e-15));
    assert.ok(Math.abs(looks.reduce((a, l) => a + l.alpha, 0) - 0.05) < 1e-12);
    assert.ok(looks[0]!.alpha < looks[4]!.alpha, 'little is spent early');
    assert.deepEqual(r, { last: 20, pairs: 20, stoppedBy: 'max-pairs', looks: 5 });
  });

  it('stops at the look that decides and runs no further pair', async () => {
    const { run, order } = recorder();
    const seen: number[] = [];
    const r = await runPairs(run, (l) => (seen.push(l.n), { result: `n=${l.n}`, decided: l.n >= 8 }), {
      minPairs: 5,
      maxPairs: 20,
    });
    assert.deepEqual(seen, [5, 7, 10]);
    assert.deepEqual(r, { last: 'n=10', pairs: 10, stoppedBy: 'decided', looks: 3 });
    assert.equal(order.length, 20);
  });

  it('takes a final look with the alpha left when the budget ends between planned looks', async () => {
    const { run, order } = recorder();
    const looks: PairLook[] = [];
    const r = await runPairs(run, (l) => (looks.push(l), { result: l.n, decided: false }), {
      minPairs: 5,
      maxPairs: 20,
      overBudget: () => order.length >= 16,
    });
    assert.equal(r.stoppedBy, 'budget');
    assert.equal(r.pairs, 8);
    assert.deepEqual(
      looks.map((l) => [l.n, l.final]),
      [
        [5, false],
        [7, false],
        [8, true],
      ],
    );
    const spentBefore = lookPlan(5, 20)[1]!.cumulative;
    assert.ok(Math.abs(looks[2]!.alpha - (0.05 - spentBefore)) < 1e-12, `final look at alpha ${looks[2]!.alpha}`);
    assert.equal(r.looks, 3);
    assert.equal(r.last, 8);
  });

  it('takes no extra look when the budget ends right at a planned look, nor before the first', async () => {
    const atLook = recorder();
    const seen: number[] = [];
    const r = await runPairs(atLook.run, (l) => (seen.push(l.n), { result: l.n, decided: false }), {
      minPairs: 5,
      maxPairs: 20,
      overBudget: () => atLook.order.length >= 14,
    });
    assert.deepEqual(seen, [5, 7]);
    assert.equal(r.stoppedBy, 'budget');
    // Before the first planned look, the budget's final look still spends all of alpha.
    const early = recorder();
    const looks: PairLook[] = [];
    const e = await runPairs(early.run, (l) => (looks.push(l), { result: l.n, decided: false }), {
      minPairs: 5,
      maxPairs: 20,
      overBudget: () => early.order.length >= 6,
    });
    assert.deepEqual(
      looks.map((l) => [l.n, l.final]),
      [[3, true]],
    );
    assert.ok(Math.abs(looks[0]!.alpha - 0.05) < 1e-12);
    assert.equal(e.pairs, 3);
  });

  it('announces the trials up to the next planned look, for job arrays', async () => {
    const { run } = recorder();
    const batches: string[][] = [];
    await runPairs(run, () => ({ result: null, decided: false }), {
      minPairs: 5,
      maxPairs: 10,
      plan: async (t) => void batches.push(t.map((x) => `${x.side}${x.pair}`)),
    });
    assert.deepEqual(
      batches.map((b) => b.length),
      [10, 4, 6],
    );
    assert.deepEqual(batches[1], ['b5', 'a5', 'a6', 'b6']);
  });

  it('stops when a trial fails', async () => {
    let n = 0;
    const seen: number[] = [];
    const r = await runPairs(
      async () => ++n !== 3,
      (l) => (seen.push(l.n), { result: l.n, decided: false }),
      { minPairs: 2, maxPairs: 5 },
    );
    assert.equal(r.stoppedBy, 'failed');
    assert.equal(r.pairs, 1);
    assert.deepEqual(seen, []);
    assert.equal(r.last, null);
  });
});

describe('runClaimPairs', () => {
  const speedup = (b: number, c: number) => c / b;

  it('confirms a planted 2.5x against "2-3x" at the first look', async () => {
    const { run, calls } = synthetic(2.5, 0.01, 1);
    const r = await runClaimPairs(run, { claim: parseClaim('2-3x'), effectOf: speedup, minPairs: 5, maxPairs: 20 });
    assert.equal(r.verdict, 'confirmed', r.reason);
    assert.equal(r.stoppedBy, 'decided');
    assert.equal(r.pairs, 5);
    assert.equal(r.looks, 1);
    assert.deepEqual(calls.slice(0, 4), ['baseline0', 'candidate0', 'candidate1', 'baseline1']);
    assert.ok(Math.abs(r.effect!.estimate - 2.5) < 0.03, String(r.effect!.estimate));
    assert.ok(r.effect!.low > 2 && r.effect!.high < 3);
    assert.equal(r.effect!.method, 'paired-t');
  });

  it('says a 2.5x falls short of "5-10x" and exceeds "1.5-2x"', async () => {
    const short = await runClaimPairs(synthetic(2.5, 0.01, 2).run, {
      claim: parseClaim('5-10x'),
      effectOf: speedup,
      minPairs: 5,
      maxPairs: 20,
    });
    assert.equal(short.verdict, 'falls short', short.reason);
    const beyond = await runClaimPairs(synthetic(2.5, 0.01, 3).run, {
      claim: parseClaim('1.5-2x'),
      effectOf: speedup,
      minPairs: 5,
      maxPairs: 20,
    });
    assert.equal(beyond.verdict, 'exceeds', beyond.reason);
  });

  it('does not confirm "5% faster" for identical sides: it falls short', async () => {
    const r = await runClaimPairs(synthetic(1, 0.01, 4).run, {
      claim: parseClaim('5% faster'),
      effectOf: speedup,
      minPairs: 5,
      maxPairs: 20,
    });
    assert.equal(r.verdict, 'falls short', r.reason);
    assert.ok(r.effect!.low < 1 && r.effect!.high > 1, `${r.effect!.low}..${r.effect!.high}`);
  });

  it('keeps adding pairs while noise hides the answer, up to max_pairs', async () => {
    const { run, calls } = synthetic(2.5, 0.6, 5);
    const r = await runClaimPairs(run, { claim: parseClaim('2.4-2.6x'), effectOf: speedup, minPairs: 5, maxPairs: 10 });
    assert.equal(r.verdict, 'inconclusive');
    assert.equal(r.stoppedBy, 'max-pairs');
    assert.equal(r.pairs, 10);
    assert.equal(calls.length, 20);
    assert.equal(r.looks, lookPlan(5, 10).length);
  });

  it('is inconclusive when a trial fails before the first look', async () => {
    let n = 0;
    const r = await runClaimPairs(async () => (++n === 4 ? null : 100), {
      claim: parseClaim('2-3x'),
      effectOf: speedup,
      minPairs: 5,
      maxPairs: 20,
    });
    assert.equal(r.verdict, 'inconclusive');
    assert.equal(r.stoppedBy, 'failed');
    assert.equal(r.effect, null);
    assert.match(r.reason, /fewer than the first look at 5/);
  });
});
