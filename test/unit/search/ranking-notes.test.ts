// What a ranking says about a config that had no competitor (issue 15, item 12): never that it
// beat the others, since there were none to beat.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rankIndependent } from '../../../harness/search/rank.js';
import { runSweep, type ArmTrialFn, type SweepOptions } from '../../../harness/search/sweep.js';

const steady: ArmTrialFn = async () => ({
  outcome: 'ok',
  reason: 'ok',
  wallSeconds: 1,
  steps: Array.from({ length: 5 }, () => ({ samples: 100, seconds: 0.1 })),
});
const options = (o: Partial<SweepOptions>): SweepOptions => ({
  strategy: 'grid',
  configs: [{ w: 2 }],
  keyOf: (c) => `w=${String(c['w'])}`,
  repeats: 3,
  budget: {},
  costOrder: ['w'],
  ...o,
});

describe('ranking notes with a single contender', () => {
  it('a one-config sweep says it is the only config that ran, not that it is significantly better', async () => {
    for (const strategy of ['grid', 'race'] as const) {
      const r = await runSweep(steady, options({ strategy }));
      assert.equal(r.ranking.chosen?.key, 'w=2');
      const note = r.ranking.note ?? '';
      assert.doesNotMatch(note, /significantly|better|faster/, note);
      assert.match(note, /^w=2 is the only config that ran/, note);
    }
  });

  it('says so when pruning left the one config', async () => {
    const r = await runSweep(steady, options({ pruned: 3 }));
    assert.match(
      r.ranking.note ?? '',
      /^w=2 is the only config left after pruning \(3 configs were pruned by the constraints\)/,
    );
  });

  it(
    'rankIndependent: one config, or one with successful trials, ' + 'is not "significantly faster than every other"',
    () => {
      const one = rankIndependent([{ key: 'a', config: { w: 1 }, rates: [100, 101, 99] }], ['w']);
      assert.equal(one.chosen?.key, 'a');
      assert.doesNotMatch(one.note ?? '', /significantly|every other/, one.note);
      assert.match(one.note ?? '', /^a is the only config that ran/);
      const alone = rankIndependent(
        [
          { key: 'a', config: { w: 1 }, rates: [100, 101, 99] },
          { key: 'b', config: { w: 2 }, rates: [] },
        ],
        ['w'],
      );
      assert.match(alone.note ?? '', /^a is the only config with a successful trial \(1 other had none\)/);
    },
  );

  it('rankIndependent leaves non-finite rates out instead of crowning them', () => {
    const r = rankIndependent(
      [
        {
          key: 'inf',
          config: { w: 1 },
          rates: [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY],
        },
        { key: 'real', config: { w: 2 }, rates: [100, 101, 99] },
      ],
      ['w'],
    );
    assert.equal(r.chosen?.key, 'real');
    assert.ok(r.order.every((a) => a.ci === null || [a.ci.estimate, a.ci.low, a.ci.high].every(Number.isFinite)));
  });

  it('a sweep never chooses a config for a non-finite throughput', async () => {
    const run: ArmTrialFn = async (config) => ({
      outcome: 'ok',
      reason: 'ok',
      wallSeconds: 1,
      steps:
        config['w'] === 1
          ? [{ samples: 1e300, seconds: 1e-300 }]
          : Array.from({ length: 5 }, () => ({ samples: 100, seconds: 0.1 })),
    });
    const r = await runSweep(run, options({ configs: [{ w: 1 }, { w: 2 }] }));
    assert.equal(r.ranking.chosen?.key, 'w=2');
    assert.doesNotMatch(r.ranking.note ?? '', /significantly faster/);
    for (const arm of r.arms)
      if (arm.ci) assert.ok([arm.ci.estimate, arm.ci.low, arm.ci.high].every(Number.isFinite), arm.key);
  });
});
