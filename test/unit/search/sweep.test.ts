// Grid and race on deterministic synthetic arms with known mean throughputs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Constraints } from '../../../harness/search/constraints.js';
import { cheaper, rank } from '../../../harness/search/rank.js';
import { configKey, expandParam, grid } from '../../../harness/search/space.js';
import { runSweep, type ArmTrialFn, type SweepOptions } from '../../../harness/search/sweep.js';
import { createRng } from '../../../harness/stats/rng.js';
import type { Config } from '../../../harness/trial/record.js';

/** Each trial: `steps` steps of 100 samples at the arm's mean rate with 3% seeded noise; 1 s per trial. */
function arms(means: (c: Config) => number, seed = 1): { run: ArmTrialFn; calls: Config[] } {
  const rng = createRng(seed);
  const calls: Config[] = [];
  const run: ArmTrialFn = async (config, { steps }) => {
    calls.push(config);
    const n = steps ?? 10;
    const mean = means(config);
    return {
      outcome: 'ok',
      reason: 'ok',
      wallSeconds: 0.2 + n * 0.1,
      steps: Array.from({ length: n }, () => ({ samples: 100, seconds: 100 / (mean * (1 + 0.03 * (rng() * 2 - 1))) })),
    };
  };
  return { run, calls };
}

const configs = grid({ num_workers: [0, 1, 2, 3], prefetch_factor: [2, 4, 8] });
const base = (o: Partial<SweepOptions>): SweepOptions => ({
  strategy: 'race',
  configs,
  keyOf: (c) => configKey(c, ['num_workers', 'prefetch_factor']),
  repeats: 5,
  budget: {},
  costOrder: ['num_workers', 'prefetch_factor'],
  seed: 1,
  briefSteps: 3,
  ...o,
});

describe('race', () => {
  // The true best is num_workers 2, prefetch 4 (1500/s); the rest are at most 1200/s.
  const means = (c: Config) => (c['num_workers'] === 2 && c['prefetch_factor'] === 4 ? 1500 : 600 + 200 * Number(c['num_workers']));

  it('picks the true best and eliminates clearly worse arms after the brief round', async () => {
    const a = arms(means);
    const r = await runSweep(a.run, base({}));
    assert.equal(r.ranking.chosen?.key, 'num_workers=2 prefetch_factor=4');
    const slow = r.arms.filter((x) => x.config['num_workers'] === 0);
    assert.ok(slow.every((x) => x.status === 'eliminated' && x.trials.length === 1), 'the slowest arms ran once');
    assert.match(slow[0]!.why!, /eliminated after round 1/);
    assert.ok(a.calls.length < configs.length * 5, `race ran ${a.calls.length} trials, grid would run ${configs.length * 5}`);
  });

  it('spends far fewer trial-seconds than grid for the same pick', async () => {
    const race = await runSweep(arms(means).run, base({ repeats: 3 }));
    const full = await runSweep(arms(means).run, base({ strategy: 'grid', repeats: 3 }));
    assert.equal(race.ranking.chosen?.key, full.ranking.chosen?.key);
    assert.ok(race.trialSeconds <= 0.4 * full.trialSeconds, `${race.trialSeconds} vs ${full.trialSeconds}`);
  });

  it('declares a tie between equal arms and chooses the cheaper one', async () => {
    const flat = (c: Config) => (Number(c['num_workers']) >= 2 ? 1000 : 500);
    const r = await runSweep(arms(flat).run, base({}));
    assert.ok(r.ranking.tied.length >= 2, 'tied arms');
    assert.equal(r.ranking.chosen?.key, 'num_workers=2 prefetch_factor=2', 'fewest workers, least prefetch');
    assert.match(r.notes.join('\n'), /not significantly different/);
    assert.ok(r.arms.filter((x) => x.config['num_workers'] === 3).some((x) => x.status === 'finished'), 'ties survive to the end');
  });

  it('stops at the trial budget and says so', async () => {
    const r = await runSweep(arms(means).run, base({ budget: { trials: 5 } }));
    assert.equal(r.trials, 5);
    assert.equal(r.budgetExhausted, true);
    assert.match(r.notes.join('\n'), /budget ran out after 5 trials/);
  });

  it('marks a failing config as failed and leaves it out of the ranking', async () => {
    const a = arms(means);
    const run: ArmTrialFn = async (c, o) => (c['num_workers'] === 2 && c['prefetch_factor'] === 4 ? { outcome: 'oom', reason: 'out of memory', steps: [], wallSeconds: 0.1 } : a.run(c, o));
    const r = await runSweep(run, base({}));
    const bad = r.arms.find((x) => x.key === 'num_workers=2 prefetch_factor=4')!;
    assert.equal(bad.status, 'failed');
    assert.equal(bad.trials.length, 1);
    assert.notEqual(r.ranking.chosen?.key, bad.key);
  });
});

describe('grid', () => {
  it('runs every config `repeats` times, interleaved across rounds', async () => {
    const a = arms(() => 1000);
    const small = grid({ num_workers: [0, 1], prefetch_factor: [2] });
    await runSweep(a.run, base({ strategy: 'grid', configs: small, repeats: 3 }));
    assert.deepEqual(a.calls.map((c) => c['num_workers']), [0, 1, 1, 0, 0, 1]);
  });
});

describe('spaces, constraints and costs', () => {
  it('expands lists, ranges and powers of two', () => {
    assert.deepEqual(expandParam([1, 2, 2, 3]), [1, 2, 3]);
    assert.deepEqual(expandParam({ range: [0, 6], step: 2 }), [0, 2, 4, 6]);
    assert.deepEqual(expandParam({ pow2: [3, 64] }), [4, 8, 16, 32, 64]);
    assert.equal(grid({ a: [1, 2], b: { range: [1, 3] } }).length, 6);
  });

  it('prunes configs over the CPU budget (cores or SLURM) and the memory budget, with reasons', () => {
    const c = new Constraints({ cpus: { uses: 'num_workers + intra_op_threads', max: 'cpus' }, memory: { uses: 'batch_size * prefetch_factor * num_workers * 4096', max: 2 ** 30 } }, { SLURM_CPUS_PER_TASK: '4' });
    const { runnable, pruned } = c.split([
      { num_workers: 2, intra_op_threads: 2, batch_size: 64, prefetch_factor: 2 },
      { num_workers: 4, intra_op_threads: 1, batch_size: 64, prefetch_factor: 2 },
      { num_workers: 2, intra_op_threads: 1, batch_size: 4096, prefetch_factor: 64 },
    ]);
    assert.equal(runnable.length, 1);
    assert.equal(pruned[0]!.reason, 'CPU budget: num_workers + intra_op_threads = 5 > 4 (4 CPUs from SLURM_CPUS_PER_TASK)');
    assert.match(pruned[1]!.reason, /^memory budget: batch_size \* prefetch_factor \* num_workers \* 4096 = 2.00 GiB > 1.00 GiB$/);
  });

  it('orders costs by the listed parameters, booleans false first', () => {
    assert.ok(cheaper({ w: 1, p: 8 }, { w: 2, p: 2 }, ['w', 'p']) < 0);
    assert.ok(cheaper({ w: 1, pw: false }, { w: 1, pw: true }, ['w', 'pw']) < 0);
    assert.equal(cheaper({ w: 1 }, { w: 1 }, ['w']), 0);
  });

  it('ranks with CIs: no overlap means a clear winner', () => {
    const r = rank(
      [
        { key: 'a', config: { w: 1 }, ci: { estimate: 100, low: 95, high: 105, level: 0.95 } },
        { key: 'b', config: { w: 0 }, ci: { estimate: 80, low: 75, high: 85, level: 0.95 } },
      ],
      ['w'],
    );
    assert.equal(r.chosen?.key, 'a');
    assert.deepEqual(r.tied.map((t) => t.key), ['a']);
  });
});

describe('budgets', () => {
  it('stops at the trial-seconds budget', async () => {
    // Each synthetic trial takes 0.2 + 10 * 0.1 = 1.2 s; a 3 s budget allows three trials.
    const r = await runSweep(arms(() => 1000).run, base({ strategy: 'grid', budget: { seconds: 3 } }));
    assert.equal(r.trials, 3);
    assert.equal(r.budgetExhausted, true);
  });
});
