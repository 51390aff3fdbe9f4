// The compare strategy: rounds whose order reverses every round, arms paired with the baseline's
// trial of the same round, decisions at planned looks (decided arms stop running), failing arms,
// budgets; the verdict vocabulary; conditional sweep parameters.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCompare, type CompareOptions } from '../../../harness/search/compare.js';
import { cheaper } from '../../../harness/search/rank.js';
import { configKey, grid } from '../../../harness/search/space.js';
import type { ArmTrial, ArmTrialFn } from '../../../harness/search/sweep.js';
import { createRng } from '../../../harness/stats/rng.js';
import { lookPlan } from '../../../harness/stats/sequential.js';
import { direction, memoryVerdict, speedVerdict } from '../../../harness/stats/verdict.js';
import type { Config } from '../../../harness/domain/index.js';
import { notesText } from '../../support/notes.js';

const keyOf = (c: Config) => configKey(c, ['empty_cache']);
const arm = (v: string) => ({ empty_cache: v });
const ok = (rate: number, memory?: number): ArmTrial => ({
  outcome: 'ok',
  reason: 'ok',
  wallSeconds: 1,
  steps: [{ samples: rate, seconds: 1 }],
  ...(memory !== undefined ? { memory } : {}),
});
const opts = (values: string[], o: Partial<CompareOptions> = {}): CompareOptions => ({
  arms: values.map(arm),
  keyOf,
  minRounds: 5,
  maxRounds: 20,
  noiseBand: 0.02,
  budget: {},
  ...o,
});

/**
 * Arms at known rates (by `empty_cache` value) with +/-`noise` seeded jitter per trial, scaled by a
 * round's common load `drift(round)`; records `value@round` in run order.
 */
function synthetic(
  rates: Record<string, number>,
  noise: number,
  seed: number,
  drift: (round: number) => number = () => 1,
) {
  const rng = createRng(seed);
  const order: string[] = [];
  const run: ArmTrialFn = async (c, o) => {
    const v = String(c['empty_cache']);
    order.push(`${v}@${o.round}`);
    return ok(rates[v]! * drift(o.round) * (1 + noise * (rng() * 2 - 1)));
  };
  return { run, order };
}

describe('runCompare', () => {
  it('runs baseline and arms in rounds whose order reverses every round', async () => {
    const { run, order } = synthetic({ a: 100, b: 100, c: 100 }, 0, 1);
    const r = await runCompare(run, opts(['a', 'b', 'c'], { minRounds: 3, maxRounds: 3 }));
    assert.deepEqual(order, ['a@0', 'b@0', 'c@0', 'c@1', 'b@1', 'a@1', 'a@2', 'b@2', 'c@2']);
    assert.equal(r.rounds, 3);
    assert.equal(r.trials, 9);
    assert.deepEqual(
      r.arms.map((a) => a.baseline),
      [true, false, false],
    );
    assert.deepEqual(
      r.arms[1]!.trials.map((t) => t.round),
      [0, 1, 2],
    );
    assert.equal(r.budgetExhausted, false);
  });

  it('puts the baseline at either end of the round when it is not the first arm', async () => {
    const { run, order } = synthetic({ a: 100, b: 100, c: 100 }, 0, 1);
    const r = await runCompare(run, opts(['a', 'b', 'c'], { baseline: 1, minRounds: 3, maxRounds: 3 }));
    assert.deepEqual(order.slice(0, 6), ['b@0', 'a@0', 'c@0', 'c@1', 'a@1', 'b@1']);
    assert.deepEqual(
      r.arms.map((a) => a.baseline),
      [false, true, false],
    );
    assert.deepEqual(
      r.arms.map((a) => a.decision),
      ['equivalent', 'undecided', 'equivalent'],
    );
  });

  it("pairs each arm with the baseline trial of the same round, so a round's load cancels", async () => {
    // Every round runs at a very different speed; arm a is exactly 10% faster than the baseline in
    // each. The baseline crashes in round 1 (after a success): that round has no pair.
    const drift = (round: number) => 1 + round;
    const run: ArmTrialFn = async (c, o) => {
      if (c['empty_cache'] === 'base' && o.round === 1)
        return { outcome: 'crash', reason: 'exit 1', steps: [], wallSeconds: 1 };
      return ok((c['empty_cache'] === 'a' ? 1100 : 1000) * drift(o.round));
    };
    const r = await runCompare(run, opts(['base', 'a'], { minRounds: 4, maxRounds: 4 }));
    const a = r.arms[1]!;
    assert.equal(r.arms[0]!.stopped, undefined, 'a failure after a success does not stop the baseline');
    assert.equal(a.ratio!.n, 3, 'three rounds with both trials');
    assert.ok(Math.abs(a.ratio!.estimate - 1.1) < 1e-9, String(a.ratio!.estimate));
    assert.equal(a.decision, 'faster');
    assert.equal(a.decidedAt, 4);
  });

  it('cancels drift between rounds with noisy trials too', async () => {
    const { run } = synthetic({ base: 1000, a: 1100 }, 0.01, 3, (round) => 1 + 0.3 * round);
    const r = await runCompare(run, opts(['base', 'a']));
    const a = r.arms[1]!;
    assert.equal(a.decision, 'faster');
    assert.equal(a.decidedAt, 5, 'decided at the first look');
    assert.ok(Math.abs(a.ratio!.estimate - 1.1) < 0.01, String(a.ratio!.estimate));
    assert.ok(a.ratio!.low > 1.02 && a.ratio!.high < 1.2, `${a.ratio!.low}..${a.ratio!.high}`);
  });

  it(
    'decides a clearly faster, a clearly slower and an identical arm and stops running them; ' +
      'an undecided arm keeps running',
    async () => {
      const rng = createRng(7);
      const order: string[] = [];
      const rates: Record<string, number> = { base: 1000, fast: 1300, slow: 700, same: 1000, noisy: 1000 };
      const run: ArmTrialFn = async (c, o) => {
        const v = String(c['empty_cache']);
        order.push(`${v}@${o.round}`);
        const noise = v === 'noisy' ? 0.3 : 0.003;
        return ok(rates[v]! * (1 + noise * (rng() * 2 - 1)));
      };
      const r = await runCompare(run, opts(['base', 'fast', 'slow', 'same', 'noisy'], { maxRounds: 10 }));
      const by = Object.fromEntries(r.arms.map((a) => [a.key, a]));
      const fast = by['empty_cache=fast']!;
      const slow = by['empty_cache=slow']!;
      const same = by['empty_cache=same']!;
      const noisy = by['empty_cache=noisy']!;
      assert.deepEqual(
        [fast.decision, slow.decision, same.decision, noisy.decision],
        ['faster', 'slower', 'equivalent', 'undecided'],
      );
      for (const decided of [fast, slow, same]) {
        assert.equal(decided.decidedAt, 5);
        assert.equal(decided.trials.length, 5, `${decided.key} stopped running once decided`);
      }
      assert.equal(noisy.trials.length, 10);
      assert.equal(noisy.decidedAt, 10);
      assert.equal(by['empty_cache=base']!.trials.length, 10);
      assert.equal(r.rounds, 10);
      assert.equal(r.trials, 5 * 5 + 2 * 5);
      // After the first look only the baseline and the undecided arm run, still in reversing order.
      assert.deepEqual(order.slice(25, 29), ['noisy@5', 'base@5', 'base@6', 'noisy@6']);
      // The alpha is split over the four arms; each look spends its share of the plan.
      const plan = lookPlan(5, 10, 0.05 / 4);
      assert.ok(Math.abs(fast.lookAlpha! - plan[0]!.alpha) < 1e-15);
      assert.ok(Math.abs(noisy.lookAlpha! - plan.at(-1)!.alpha) < 1e-15);
      assert.ok(noisy.ratio!.low < 1 && noisy.ratio!.high > 1);
    },
  );

  it('stops when every arm is decided, before max_rounds', async () => {
    const { run } = synthetic({ base: 1000, a: 2000 }, 0.01, 11);
    const r = await runCompare(run, opts(['base', 'a']));
    assert.equal(r.rounds, 5);
    assert.equal(r.trials, 10);
  });

  it('decides memory separately: less memory at the same speed', async () => {
    const run: ArmTrialFn = async (c, o) =>
      ok(1000 * (1 + 0.001 * (o.round % 3)), c['empty_cache'] === 'a' ? 800 + o.round : 1000 + o.round);
    const r = await runCompare(run, opts(['base', 'a']));
    const a = r.arms[1]!;
    assert.equal(a.decision, 'equivalent');
    assert.equal(a.memoryDecision, 'less memory');
    assert.ok(Math.abs(a.memoryRatio!.estimate - 0.8) < 0.01);
  });

  it('stops at the trial budget, says how many rounds completed, and takes a last look', async () => {
    const { run } = synthetic({ a: 100, b: 100 }, 0, 1);
    const r = await runCompare(run, opts(['a', 'b'], { maxRounds: 10, budget: { trials: 5 } }));
    assert.equal(r.trials, 5);
    assert.equal(r.rounds, 2);
    assert.equal(r.budgetExhausted, true);
    assert.match(notesText(r.notes), /budget ran out after 5 trials .* 2 complete rounds/);
    assert.equal(r.arms[1]!.decision, 'undecided', 'two pairs give no interval');
    assert.equal(r.arms[1]!.decidedAt, 2);
    const bySeconds = await runCompare(
      synthetic({ a: 100, b: 100 }, 0, 1).run,
      opts(['a', 'b'], { maxRounds: 10, budget: { seconds: 3 } }),
    );
    assert.equal(bySeconds.trials, 3);
  });

  it('gives the look after a budget stop between planned looks the alpha left', async () => {
    const { run } = synthetic({ base: 1000, noisy: 1000 }, 0.3, 5);
    // Rounds 1 to 6 take 12 trials; the first look is at 5, the next planned one at 7.
    const r = await runCompare(run, opts(['base', 'noisy'], { budget: { trials: 12 } }));
    const a = r.arms[1]!;
    assert.equal(r.rounds, 6);
    assert.equal(a.decidedAt, 6);
    assert.equal(a.ratio!.n, 6);
    assert.ok(Math.abs(a.lookAlpha! - (0.05 - lookPlan(5, 20)[0]!.cumulative)) < 1e-12, String(a.lookAlpha));
  });

  it('does not rerun an arm that failed before it ever succeeded, but keeps one that failed later', async () => {
    let flakyCalls = 0;
    const run: ArmTrialFn = async (c) => {
      if (c['empty_cache'] === 'oom-always') return { outcome: 'oom', reason: 'oom event', steps: [], wallSeconds: 1 };
      if (c['empty_cache'] === 'flaky' && ++flakyCalls === 2)
        return { outcome: 'crash', reason: 'exit 1', steps: [], wallSeconds: 1 };
      return ok(100);
    };
    const r = await runCompare(run, opts(['base', 'oom-always', 'flaky'], { minRounds: 4, maxRounds: 4 }));
    const [base, oom, flaky] = r.arms;
    assert.equal(base!.trials.length, 4);
    assert.equal(oom!.trials.length, 1, 'a deterministic failure is not repeated');
    assert.match(oom!.stopped!, /^oom/);
    assert.equal(oom!.decision, 'undecided');
    assert.deepEqual(
      flaky!.trials.map((t) => t.outcome),
      ['ok', 'crash', 'ok', 'ok'],
    );
    assert.equal(flaky!.ratio!.n, 3, 'the crashed round has no pair');
    assert.equal(flaky!.decision, 'equivalent');
    assert.match(notesText(r.notes), /arm empty_cache=oom-always failed \(oom\)/);
  });

  it('stops the whole comparison when the baseline fails before any success', async () => {
    const run: ArmTrialFn = async (c) =>
      c['empty_cache'] === 'base' ? { outcome: 'oom', reason: 'oom event', steps: [], wallSeconds: 1 } : ok(100);
    const r = await runCompare(run, opts(['base', 'a']));
    assert.equal(r.trials, 2, 'one round, then nothing');
    assert.equal(r.rounds, 1);
    assert.match(notesText(r.notes), /the baseline failed \(oom\)/);
    assert.equal(r.arms[1]!.decision, 'undecided');
  });

  it('decides one-sided with noiseBandAbove Infinity: far faster is "equivalent" (not slower), slower stays slower', async () => {
    const { run } = synthetic({ a: 100, fast: 130, slow: 80 }, 0.01, 7);
    const two = await runCompare(run, opts(['a', 'fast']));
    assert.equal(two.arms[1]!.decision, 'faster');
    const one = await runCompare(run, opts(['a', 'fast', 'slow'], { noiseBandAbove: Number.POSITIVE_INFINITY }));
    assert.deepEqual(
      one.arms.slice(1).map((a) => [a.decision, a.decidedAt]),
      [
        ['equivalent', 5],
        ['slower', 5],
      ],
    );
  });
});

describe('verdicts with a noise band', () => {
  const ci = (low: number, high: number) => ({ estimate: (low + high) / 2, low, high, level: 0.95 });
  it('calls a change only when the whole CI is outside 1 +/- band', () => {
    assert.equal(speedVerdict(direction(ci(1.03, 1.1), 0.02)), 'faster');
    assert.equal(
      speedVerdict(direction(ci(1.01, 1.1), 0.02)),
      'no significant difference',
      'significant, but inside the band at its low end',
    );
    assert.equal(speedVerdict(direction(ci(0.8, 0.97), 0.02)), 'slower');
    assert.equal(speedVerdict(direction(ci(0.9, 1.1), 0)), 'no significant difference');
    assert.equal(speedVerdict(direction(null, 0.02)), 'no significant difference');
    assert.equal(memoryVerdict(direction(ci(0.7, 0.8), 0.02)), 'less memory');
    assert.equal(memoryVerdict(direction(ci(1.2, 1.3), 0.02)), 'more memory');
    assert.equal(direction(ci(1.001, 1.002), 0), 'higher');
  });
});

describe('conditional sweep parameters (applies_when)', () => {
  it('leaves out parameters that do not apply and runs coinciding configs once', () => {
    const g = grid(
      { num_workers: [0, 1, 2], prefetch_factor: [2, 4], pin_memory: [false, true], persistent_workers: [false, true] },
      { prefetch_factor: 'num_workers', persistent_workers: 'num_workers' },
    );
    // 2 (pin_memory) without workers + 2 x 2 x 2 x 2 with workers.
    assert.equal(g.length, 18);
    const noWorkers = g.filter((c) => c['num_workers'] === 0);
    assert.deepEqual(noWorkers, [
      { num_workers: 0, pin_memory: false },
      { num_workers: 0, pin_memory: true },
    ]);
    assert.equal(
      configKey(noWorkers[0]!, ['num_workers', 'prefetch_factor', 'pin_memory']),
      'num_workers=0 pin_memory=false',
    );
    assert.equal(new Set(g.map((c) => configKey(c, Object.keys(c)))).size, 18);
    assert.equal(grid({ a: [false, true], b: [1, 2] }, { b: 'a' }).length, 3, 'a boolean condition');
  });
  it('a parameter that does not apply costs nothing when choosing among ties', () => {
    assert.ok(cheaper({ num_workers: 0 }, { num_workers: 0, prefetch_factor: 2 }, ['prefetch_factor']) < 0);
  });
});
