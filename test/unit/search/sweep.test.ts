// Grid and race on deterministic synthetic configs with known mean throughputs, and the ranking
// of configs measured in independent trials.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Constraints } from '../../../harness/search/constraints.js';
import { cheaper, rankIndependent } from '../../../harness/search/rank.js';
import { configKey, expandParam, grid } from '../../../harness/search/space.js';
import { runSweep, type ArmTrialFn, type SweepOptions } from '../../../harness/search/sweep.js';
import { createRng } from '../../../harness/stats/rng.js';
import type { Config } from '../../../harness/domain/index.js';
import { notesText } from '../../support/notes.js';

/**
 * Each trial: 10 steps of 100 samples at the config's mean rate times a per-trial factor 1 +/- `noise`
 * (seeded), 1.2 s of wall time.
 */
function arms(means: (c: Config) => number, noise = 0.01, seed = 1): { run: ArmTrialFn; calls: string[] } {
  const rng = createRng(seed);
  const calls: string[] = [];
  const run: ArmTrialFn = async (config, { round }) => {
    calls.push(`${key(config)}@${round}`);
    const rate = means(config) * (1 + noise * (rng() * 2 - 1));
    return {
      outcome: 'ok',
      reason: 'ok',
      wallSeconds: 1.2,
      steps: Array.from({ length: 10 }, () => ({ samples: 100, seconds: 100 / rate })),
    };
  };
  return { run, calls };
}

const key = (c: Config) => configKey(c, ['num_workers', 'prefetch_factor']);
const configs = grid({ num_workers: [0, 1, 2, 3], prefetch_factor: [2, 4, 8] });
const base = (o: Partial<SweepOptions>): SweepOptions => ({
  strategy: 'race',
  configs,
  keyOf: key,
  repeats: 8,
  budget: {},
  costOrder: ['num_workers', 'prefetch_factor'],
  ...o,
});
const BEST = 'num_workers=2 prefetch_factor=4';
// The true best is num_workers 2, prefetch 4 (1500/s); the rest are at most 1200/s.
const means = (c: Config) => (key(c) === BEST ? 1500 : 600 + 200 * Number(c['num_workers']));

describe('race', () => {
  it('never eliminates before 3 full rounds, even when asked to look after one', async () => {
    const a = arms(means);
    const r = await runSweep(a.run, base({ minRounds: 1 }));
    const eliminated = r.arms.filter((x) => x.status === 'eliminated');
    assert.ok(eliminated.length > 0);
    for (const x of r.arms) assert.ok(x.trials.length >= 3, `${x.key} ran ${x.trials.length} trials`);
    assert.ok(eliminated.every((x) => x.trials.length === 3));
    assert.match(eliminated[0]!.why!, /^eliminated: .* after 3 rounds \(round-blocked t test/);
    // Full rounds only: every trial of round r ran before any of round r + 1.
    const rounds = a.calls.map((c) => Number(c.split('@')[1]));
    assert.deepEqual(
      rounds,
      [...rounds].sort((x, y) => x - y),
    );
  });

  it('eliminates clearly worse configs, picks the true best, and stops when it is the only one left', async () => {
    const a = arms(means);
    const r = await runSweep(a.run, base({}));
    assert.equal(r.ranking.chosen?.key, BEST);
    assert.deepEqual(
      r.ranking.tied.map((t) => t.key),
      [BEST],
    );
    assert.ok(r.arms.filter((x) => x.key !== BEST).every((x) => x.status === 'eliminated'));
    assert.equal(r.arms.find((x) => x.key === BEST)!.status, 'finished');
    assert.equal(r.rounds, 3);
    assert.equal(r.trials, configs.length * 3);
    assert.match(r.ranking.note!, /is the only config left: each of the 11 others failed or was eliminated/);
  });

  it('spends far fewer trial-seconds than a grid of as many rounds, for the same pick', async () => {
    const race = await runSweep(arms(means).run, base({}));
    const full = await runSweep(arms(means).run, base({ strategy: 'grid' }));
    assert.equal(full.trials, configs.length * 8);
    assert.equal(race.ranking.chosen?.key, full.ranking.chosen?.key);
    assert.ok(race.trialSeconds <= 0.4 * full.trialSeconds, `${race.trialSeconds} vs ${full.trialSeconds}`);
  });

  it(
    'keeps identical configs tied, stops once they are within the noise band, ' + 'and chooses the cheapest of them',
    async () => {
      const flat = (c: Config) => (Number(c['num_workers']) >= 2 ? 1000 : 500);
      const r = await runSweep(arms(flat, 0.005).run, base({}));
      const fast = r.arms.filter((x) => Number(x.config['num_workers']) >= 2);
      assert.ok(
        fast.every((x) => x.status === 'finished'),
        'no identical config is eliminated',
      );
      assert.ok(r.arms.filter((x) => Number(x.config['num_workers']) < 2).every((x) => x.status === 'eliminated'));
      assert.deepEqual(new Set(r.ranking.tied.map((t) => t.key)), new Set(fast.map((x) => x.key)));
      assert.equal(r.ranking.chosen?.key, 'num_workers=2 prefetch_factor=2', 'fewest workers, least prefetch');
      assert.ok(r.rounds < 8, `stopped after ${r.rounds} rounds`);
      assert.match(
        notesText(r.notes),
        new RegExp(`race stopped after ${r.rounds} rounds: the 6 configs left are within 2.0% of the leader`),
      );
    },
  );

  it('gives a tie to the cheapest config, and says when it is not shown to be within the noise band', async () => {
    // Four configs of the same speed under 10% noise: none is shown slower, none shown within 2%.
    const four = grid({ num_workers: [0, 1, 2, 3], prefetch_factor: [2] });
    const r = await runSweep(arms(() => 1000, 0.1, 3).run, base({ configs: four, repeats: 5 }));
    assert.ok(
      r.arms.every((x) => x.status === 'finished'),
      'noise is no reason to eliminate',
    );
    assert.equal(r.rounds, 5);
    assert.equal(r.ranking.tied.length, 4);
    // The cheapest of the tied configs whose estimate is within 2% of the leader's.
    const lead = r.ranking.leader!.ci!.estimate;
    const close = r.arms.filter((a) => a.ci!.estimate >= lead * 0.98).map((a) => Number(a.config['num_workers']));
    assert.ok(close.length > 1 && r.ranking.leader!.config['num_workers'] !== Math.min(...close), 'a real choice');
    assert.equal(r.ranking.chosen?.config['num_workers'], Math.min(...close), 'ties go to the cheapest');
    assert.match(
      r.ranking.note!,
      /chose the cheapest whose estimate is within 2\.0% of it, num_workers=\d prefetch_factor=2: not shown slower/,
    );
  });

  it('never chooses an inert setting (pin_memory without a GPU) over its twin with it off', async () => {
    // pin_memory=true measures faster by chance, and is the cheaper order's last: the twin with it off wins.
    const configs = grid({ num_workers: [2], pin_memory: [false, true] });
    const speed = (c: Config) => (c['pin_memory'] ? 1100 : 1000);
    const r = await runSweep(
      arms(speed, 0.01, 3).run,
      base({
        configs,
        repeats: 5,
        inert: ['pin_memory'],
        costOrder: ['num_workers'],
        keyOf: (c) => configKey(c, ['num_workers', 'pin_memory']),
      }),
    );
    assert.equal(r.ranking.chosen?.config['pin_memory'], false);
    assert.match(
      r.ranking.note!,
      /pin_memory does nothing on this device, so num_workers=2 pin_memory=false \(off\) is chosen/,
    );
  });

  it('stops at the trial budget and says so', async () => {
    const r = await runSweep(arms(means).run, base({ budget: { trials: 5 } }));
    assert.equal(r.trials, 5);
    assert.equal(r.budgetExhausted, true);
    assert.match(notesText(r.notes), /budget ran out after 5 trials/);
  });

  it('marks a failing config as failed, stops running it, and leaves it out of the ranking', async () => {
    const a = arms(means);
    const run: ArmTrialFn = async (c, o) =>
      key(c) === BEST ? { outcome: 'oom', reason: 'out of memory', steps: [], wallSeconds: 0.1 } : a.run(c, o);
    const r = await runSweep(run, base({}));
    const bad = r.arms.find((x) => x.key === BEST)!;
    assert.equal(bad.status, 'failed');
    assert.equal(bad.trials.length, 1);
    assert.match(bad.why!, /^oom: out of memory/);
    assert.ok(!r.ranking.tied.some((t) => t.key === BEST));
    // The three num_workers=3 configs (1200/s) are the best left and identical: the cheapest is chosen.
    assert.equal(r.ranking.chosen?.key, 'num_workers=3 prefetch_factor=2');
  });
});

describe('grid', () => {
  it('runs every config `repeats` times, the order rotating each round', async () => {
    const a = arms(() => 1000);
    const small = grid({ num_workers: [0, 1], prefetch_factor: [2] });
    const r = await runSweep(a.run, base({ strategy: 'grid', configs: small, repeats: 3 }));
    assert.deepEqual(
      a.calls.map((c) => c.slice('num_workers='.length, 'num_workers='.length + 1)),
      ['0', '1', '1', '0', '0', '1'],
    );
    assert.ok(r.arms.every((x) => x.status === 'finished' && x.trials.length === 3));
  });

  it('eliminates nothing but ranks on the round-blocked test at the end', async () => {
    const r = await runSweep(arms(means).run, base({ strategy: 'grid', repeats: 3 }));
    assert.equal(r.trials, configs.length * 3);
    assert.ok(r.arms.every((x) => x.status === 'finished'));
    assert.equal(r.ranking.chosen?.key, BEST);
    assert.deepEqual(
      r.ranking.tied.map((t) => t.key),
      [BEST],
    );
    const best = r.arms.find((x) => x.key === BEST)!;
    assert.ok(best.ci!.low < 1500 && best.ci!.high > 1500, `${best.ci!.low}..${best.ci!.high}`);
    assert.equal(best.ci!.method, 'log-t');
  });

  it('gives configs with fewer than 3 trials a CI from the spread pooled over the stage', async () => {
    const r = await runSweep(arms(means, 0.02).run, base({ strategy: 'grid', repeats: 2 }));
    assert.ok(r.arms.every((x) => x.ci?.method === 'pooled-log-t'));
    assert.match(
      notesText(r.notes),
      new RegExp(
        '12 config\\(s\\) ran fewer than 3 trials: ' +
          "their CIs use the between-trial spread pooled over the stage's configs \\(12 degrees of freedom\\)",
      ),
    );
    const best = r.arms.find((x) => x.key === BEST)!;
    assert.ok(best.ci!.low < 1500 && best.ci!.high > 1500);
  });
});

describe('rankIndependent', () => {
  const g = (k: string, w: number, rates: number[]) => ({ key: k, config: { w }, rates });

  it('ties configs that Welch cannot separate from the leader and chooses the cheapest of them', () => {
    const r = rankIndependent(
      [g('a', 2, [1010, 1020, 1000]), g('b', 1, [1000, 990, 1005]), g('c', 0, [500, 505, 495])],
      ['w'],
    );
    assert.equal(r.leader?.key, 'a');
    assert.deepEqual(
      r.order.map((o) => o.key),
      ['a', 'b', 'c'],
      'best estimate first',
    );
    assert.deepEqual(
      r.tied.map((t) => t.key),
      ['a', 'b'],
    );
    assert.equal(r.chosen?.key, 'b', 'the cheaper of the tied configs');
    assert.match(r.note!, /2 configs are not significantly different from the best .*chose the cheapest, b/);
  });

  it('names a clear winner and counts a config with fewer than 3 trials as tied', () => {
    const clear = rankIndependent([g('fast', 2, [1000, 1010, 990]), g('slow', 0, [500, 505, 495])], ['w']);
    assert.deepEqual(
      clear.tied.map((t) => t.key),
      ['fast'],
    );
    assert.equal(clear.chosen?.key, 'fast');
    assert.match(clear.note!, /fast is significantly faster than every other config/);
    const few = rankIndependent([g('fast', 2, [1000, 1010, 990]), g('once', 1, [980])], ['w']);
    assert.deepEqual(
      few.tied.map((t) => t.key),
      ['fast', 'once'],
    );
    assert.equal(few.order.length, 1, 'a single trial gets no CI');
    assert.deepEqual(rankIndependent([], ['w']).chosen, undefined);
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
    const c = new Constraints(
      {
        cpus: { uses: 'num_workers + intra_op_threads', max: 'cpus' },
        memory: { uses: 'batch_size * prefetch_factor * num_workers * 4096', max: 2 ** 30 },
      },
      { SLURM_CPUS_PER_TASK: '4' },
    );
    const { runnable, pruned } = c.split([
      { num_workers: 2, intra_op_threads: 2, batch_size: 64, prefetch_factor: 2 },
      { num_workers: 4, intra_op_threads: 1, batch_size: 64, prefetch_factor: 2 },
      { num_workers: 2, intra_op_threads: 1, batch_size: 4096, prefetch_factor: 64 },
    ]);
    assert.equal(runnable.length, 1);
    // uses names intra_op_threads: the main process's threads are already counted (main 0).
    assert.equal(pruned[0]!.reason, 'CPU budget: num_workers + intra_op_threads = 5 > 4 CPUs (SLURM_CPUS_PER_TASK)');
    assert.match(
      pruned[1]!.reason,
      /^memory budget: batch_size \* prefetch_factor \* num_workers \* 4096 = 2.00 GiB > 1.00 GiB$/,
    );
  });

  it('orders costs by the listed parameters, booleans false first', () => {
    assert.ok(cheaper({ w: 1, p: 8 }, { w: 2, p: 2 }, ['w', 'p']) < 0);
    assert.ok(cheaper({ w: 1, pw: false }, { w: 1, pw: true }, ['w', 'pw']) < 0);
    assert.equal(cheaper({ w: 1 }, { w: 1 }, ['w']), 0);
  });
});

describe('budgets', () => {
  it('stops at the trial-seconds budget', async () => {
    // Each synthetic trial takes 1.2 s; a 3 s budget allows three trials.
    const r = await runSweep(arms(() => 1000).run, base({ strategy: 'grid', budget: { seconds: 3 } }));
    assert.equal(r.trials, 3);
    assert.equal(r.budgetExhausted, true);
  });
});
