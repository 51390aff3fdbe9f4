// The compare strategy (interleaving, budget, failing arms), conditional sweep parameters, and the
// statistics a compare stage reports: medians with hierarchical CIs, ratios and verdicts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCompare } from '../../../harness/search/compare.js';
import { cheaper } from '../../../harness/search/rank.js';
import { configKey, grid } from '../../../harness/search/space.js';
import type { ArmTrial, ArmTrialFn } from '../../../harness/search/sweep.js';
import { bootstrapMedianRatio } from '../../../harness/stats/bootstrap.js';
import { createRng } from '../../../harness/stats/rng.js';
import { medianRateInterval, medianRateRatioInterval, trialRates } from '../../../harness/stats/throughput.js';
import { direction, memoryVerdict, speedVerdict } from '../../../harness/stats/verdict.js';
import type { Config, StepSample } from '../../../harness/trial/record.js';

const keyOf = (c: Config) => configKey(c, ['empty_cache']);
const ok = (rate: number): ArmTrial => ({ outcome: 'ok', reason: 'ok', wallSeconds: 1, steps: [{ samples: rate, seconds: 1 }] });

/** `steps` steps of 100 samples at `rate` samples/s with +/-`noise` seeded jitter. */
function trial(rate: number, rng: () => number, steps = 20, noise = 0.03): StepSample[] {
  return Array.from({ length: steps }, () => ({ samples: 100, seconds: 100 / (rate * (1 + noise * (rng() * 2 - 1))) }));
}

describe('runCompare', () => {
  it('interleaves the arms A B C A B C ... for the given rounds', async () => {
    const order: string[] = [];
    const run: ArmTrialFn = async (c, o) => {
      order.push(`${String(c['empty_cache'])}@${o.round}`);
      return ok(100);
    };
    const r = await runCompare(run, { arms: ['a', 'b', 'c'].map((v) => ({ empty_cache: v })), keyOf, repeats: 3, budget: {} });
    assert.deepEqual(order, ['a@0', 'b@0', 'c@0', 'a@1', 'b@1', 'c@1', 'a@2', 'b@2', 'c@2']);
    assert.equal(r.rounds, 3);
    assert.equal(r.trials, 9);
    assert.ok(r.arms.every((a) => a.trials.length === 3));
    assert.equal(r.budgetExhausted, false);
  });

  it('stops at the trial budget and says how many rounds completed', async () => {
    const run: ArmTrialFn = async () => ok(100);
    const r = await runCompare(run, { arms: ['a', 'b'].map((v) => ({ empty_cache: v })), keyOf, repeats: 10, budget: { trials: 5 } });
    assert.equal(r.trials, 5);
    assert.equal(r.rounds, 2);
    assert.equal(r.budgetExhausted, true);
    assert.match(r.notes.join('\n'), /budget ran out after 5 trials .* 2 complete rounds/);
    const bySeconds = await runCompare(run, { arms: ['a', 'b'].map((v) => ({ empty_cache: v })), keyOf, repeats: 10, budget: { seconds: 3 } });
    assert.equal(bySeconds.trials, 3);
  });

  it('does not rerun an arm that failed before it ever succeeded, but keeps one that failed later', async () => {
    let bCalls = 0;
    const run: ArmTrialFn = async (c) => {
      if (c['empty_cache'] === 'oom-always') return { outcome: 'oom', reason: 'oom event', steps: [], wallSeconds: 1 };
      if (c['empty_cache'] === 'flaky' && ++bCalls === 2) return { outcome: 'crash', reason: 'exit 1', steps: [], wallSeconds: 1 };
      return ok(100);
    };
    const r = await runCompare(run, { arms: ['base', 'oom-always', 'flaky'].map((v) => ({ empty_cache: v })), keyOf, repeats: 3, budget: {} });
    const [base, oom, flaky] = r.arms;
    assert.equal(base!.trials.length, 3);
    assert.equal(oom!.trials.length, 1, 'a deterministic failure is not repeated');
    assert.match(oom!.stopped!, /^oom/);
    assert.equal(flaky!.trials.length, 3);
    assert.deepEqual(flaky!.trials.map((t) => t.outcome), ['ok', 'crash', 'ok']);
    assert.match(r.notes.join('\n'), /arm empty_cache=oom-always failed \(oom\)/);
  });
});

describe('median throughput and its ratio, hierarchical', () => {
  it('the median over trials resists one slow process; the pooled rate does not', () => {
    const rng = createRng(5);
    const trials = [trial(1000, rng), trial(1000, rng), trial(1000, rng), trial(1000, rng), trial(300, rng)];
    const ci = medianRateInterval(trials, { seed: 1 })!;
    assert.ok(Math.abs(ci.estimate - 1000) < 15, String(ci.estimate));
    assert.ok(ci.low < ci.estimate && ci.high > ci.estimate);
    assert.deepEqual(medianRateInterval(trials, { seed: 1 }), ci, 'seeded: the same journal gives the same CI');
    assert.equal(trialRates(trials).length, 5);
    assert.equal(medianRateInterval([[]]), null);
  });

  it('the ratio CI excludes 1 for a real 10% difference and contains it for identical arms', () => {
    const rng = createRng(9);
    const a = Array.from({ length: 5 }, () => trial(1000, rng));
    const b = Array.from({ length: 5 }, () => trial(1100, rng));
    const same = Array.from({ length: 5 }, () => trial(1000, rng));
    const up = medianRateRatioInterval(a, b, { seed: 2 })!;
    assert.ok(Math.abs(up.estimate - 1.1) < 0.02, String(up.estimate));
    assert.ok(up.low > 1.02, `${up.low}`);
    const flat = medianRateRatioInterval(a, same, { seed: 2 })!;
    assert.ok(flat.low < 1 && flat.high > 1, `${flat.low}..${flat.high}`);
    assert.equal(medianRateRatioInterval([], b), null);
  });

  it('memory: the ratio of median peaks', () => {
    const base = [500, 510, 505, 495, 502];
    const less = base.map((v) => v * 0.8);
    const r = bootstrapMedianRatio(base, less, { seed: 1 })!;
    assert.ok(Math.abs(r.estimate - 0.8) < 1e-9);
    assert.ok(r.high < 0.85 && r.low > 0.75);
    assert.equal(bootstrapMedianRatio([0, 0], [1]), null);
  });
});

describe('verdicts with a noise band', () => {
  const ci = (low: number, high: number) => ({ estimate: (low + high) / 2, low, high, level: 0.95 });
  it('calls a change only when the whole CI is outside 1 +/- band', () => {
    assert.equal(speedVerdict(direction(ci(1.03, 1.1), 0.02)), 'faster');
    assert.equal(speedVerdict(direction(ci(1.01, 1.1), 0.02)), 'no significant difference', 'significant, but inside the band at its low end');
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
    assert.deepEqual(noWorkers, [{ num_workers: 0, pin_memory: false }, { num_workers: 0, pin_memory: true }]);
    assert.equal(configKey(noWorkers[0]!, ['num_workers', 'prefetch_factor', 'pin_memory']), 'num_workers=0 pin_memory=false');
    assert.equal(new Set(g.map((c) => configKey(c, Object.keys(c)))).size, 18);
    assert.equal(grid({ a: [false, true], b: [1, 2] }, { b: 'a' }).length, 3, 'a boolean condition');
  });
  it('a parameter that does not apply costs nothing when choosing among ties', () => {
    assert.ok(cheaper({ num_workers: 0 }, { num_workers: 0, prefetch_factor: 2 }, ['prefetch_factor']) < 0);
  });
});
