// The distribution-free CI of the median that `tunebench time` prints: its coverage, checked by
// simulation through the shipped function on skewed, heavy-tailed and discrete-free run times.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { medianInterval } from '../../../harness/stats/summary.js';
import { createRng } from '../../../harness/stats/rng.js';

/** A standard normal from two uniforms (Box-Muller). */
const normal = (rng: () => number) => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());

describe('medianInterval', () => {
  it('gives no interval below 6 values, where no pair of order statistics reaches 95%', () => {
    assert.equal(medianInterval([1, 2, 3, 4, 5]), null);
    assert.equal(medianInterval([]), null);
    const six = medianInterval([6, 1, 5, 2, 4, 3])!;
    assert.deepEqual([six.low, six.estimate, six.high], [1, 3.5, 6]);
    assert.equal(six.level, 1 - 2 / 64);
  });

  it('uses the innermost order statistics that keep the coverage at or above 95%', () => {
    // n = 10: P(Bin(10, 1/2) <= 1) = 11/1024 <= 0.025 < P(<= 2) = 56/1024, so x(2) and x(9).
    const ten = medianInterval([10, 9, 8, 7, 6, 5, 4, 3, 2, 1])!;
    assert.deepEqual([ten.low, ten.high], [2, 9]);
    assert.equal(ten.level, 1 - 22 / 1024);
    // n = 100: the textbook ranks are 40 and 61.
    const hundred = medianInterval(Array.from({ length: 100 }, (_, i) => i + 1))!;
    assert.deepEqual([hundred.low, hundred.high], [40, 61]);
    assert.ok(hundred.level >= 0.95 && hundred.level < 0.97, String(hundred.level));
  });

  for (const [name, draw, trueMedian] of [
    // Process times: a floor plus a log-normal tail (median of the log-normal part is 1).
    ['log-normal run times', (rng: () => number) => 0.05 + Math.exp(0.5 * normal(rng)), 1.05],
    // Rare stalls: 10% of runs take 5x longer; the median is the fast runs' median.
    ['runs with rare 5x stalls', (rng: () => number) => (rng() < 0.1 ? 5 : 1) * (1 + 0.02 * normal(rng)), undefined],
  ] as const) {
    it(`covers the true median at its stated level: ${name}`, () => {
      const rng = createRng(2026);
      // The true median of the stall mixture, by a large sample through the same draw.
      const big = Array.from({ length: 200_001 }, () => draw(rng)).sort((a, b) => a - b);
      const truth = trueMedian ?? big[100_000]!;
      for (const n of [6, 10, 20, 50]) {
        const sims = 4000;
        let covered = 0;
        let level = 0;
        for (let s = 0; s < sims; s++) {
          const ci = medianInterval(Array.from({ length: n }, () => draw(rng)))!;
          level = ci.level;
          if (ci.low <= truth && truth <= ci.high) covered += 1;
        }
        const rate = covered / sims;
        const se = Math.sqrt((level * (1 - level)) / sims);
        assert.ok(level >= 0.95, `n=${n}: stated level ${level}`);
        assert.ok(Math.abs(rate - level) < 4 * se + 0.003, `n=${n}: coverage ${rate} against stated ${level}`);
      }
    });
  }
});
