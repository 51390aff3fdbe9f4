// A night of the paired gate (search/nightly-gate.ts) on trials whose builds differ by a known factor:
// through runCompare's rounds and sequential test, a 20% slowdown is a regression, the same build is not,
// a load burst that slows every trial of the night cancels in the pairs, and a build that fails is named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUILD_PARAMETER, measureNight } from '../../../harness/search/nightly-gate.js';
import type { ArmTrialFn } from '../../../harness/search/sweep.js';
import { createRng } from '../../../harness/stats/rng.js';

/** Trials of two builds: tonight's throughput is `factor` x the reference's, with 3% noise and a night-wide `load`. */
function builds(factor: number, seed: number, load = 1): { run: ArmTrialFn; order: string[] } {
  const rng = createRng(seed);
  const order: string[] = [];
  const run: ArmTrialFn = (config) => {
    const build = String(config[BUILD_PARAMETER]);
    order.push(build);
    const noise = Math.exp(0.03 * Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng()));
    const rate = 1000 * load * noise * (build === 'tonight' ? factor : 1);
    return Promise.resolve({ outcome: 'ok', reason: '', steps: [{ samples: rate, seconds: 1 }], wallSeconds: 1 });
  };
  return { run, order };
}

const night = { reference: 'ref', tonight: 'tonight', config: { batch_size: 64 }, threshold: 0.05 };

describe('measureNight', () => {
  it('calls a 20% slowdown a regression, with the CI of tonight/reference below 1 - threshold', async () => {
    const { run, order } = builds(0.8, 1);
    const m = await measureNight(run, night);
    assert.equal(m.verdict, 'regression');
    assert.ok(m.ratio && m.ratio.high < 0.95 && m.ratio.low < 0.8 && m.ratio.high > 0.8, JSON.stringify(m.ratio));
    assert.equal(m.trials, 2 * m.rounds);
    // Rounds alternate which build runs first.
    assert.deepEqual(order.slice(0, 4), ['ref', 'tonight', 'tonight', 'ref']);
  });

  it('calls the same build no regression, and a night slowed by half for both builds too', async () => {
    for (const load of [1, 0.5]) {
      const m = await measureNight(builds(1, 2, load).run, night);
      assert.equal(m.verdict, 'no-regression', `load ${load}: ${JSON.stringify(m.ratio)}`);
      assert.ok(m.ratio && m.ratio.low > 0.95);
    }
  });

  it('is undecided when the rounds run out with the CI across 1 - threshold', async () => {
    const m = await measureNight(builds(0.95, 3).run, { ...night, maxRounds: 5 });
    assert.equal(m.verdict, 'undecided');
    assert.equal(m.rounds, 5);
    assert.ok(m.ratio && m.ratio.low < 0.95 && m.ratio.high > 0.95);
  });

  it('names the side whose trials fail, and refuses a threshold that is not a fraction', async () => {
    const broken: ArmTrialFn = (config) =>
      Promise.resolve(
        config[BUILD_PARAMETER] === 'tonight'
          ? { outcome: 'crash', reason: 'exit code 1', steps: [], wallSeconds: 1 }
          : { outcome: 'ok', reason: '', steps: [{ samples: 10, seconds: 1 }], wallSeconds: 1 },
      );
    const m = await measureNight(broken, night);
    assert.equal(m.verdict, 'failed');
    assert.equal(m.failure?.side, 'tonight');
    await assert.rejects(measureNight(broken, { ...night, threshold: 5 }), /between 0 and 1 \(a fraction\), got 5/);
  });
});
