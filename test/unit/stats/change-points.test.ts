// Step detection in nightly history: planted steps are found (every seed), pure noise gives none,
// one-night blips are outliers, CI weights pull, the DP is exact against brute force, and bad input
// is rejected with a RangeError.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  detectChangePoints,
  MIN_LEVEL_NIGHTS,
  type SeriesPoint,
  type StepFit,
} from '../../../harness/stats/change-points.js';
import { createRng } from '../../../harness/stats/rng.js';

const SEEDS = 200;
/** Ratios of two segment medians of +/-3% noise land within about 5% of the planted step; one night within 6%. */
const RATIO_TOL = 0.05;
const ONE_NIGHT_TOL = 0.06;

/** Nights of 1000 x (1 + u), u uniform in [-3%, +3%], times shape(i), each with a CI of about +/-2%. */
function nights(seed: number, n: number, shape: (i: number) => number = () => 1): SeriesPoint[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const value = 1000 * (1 + (rng() * 2 - 1) * 0.03) * shape(i);
    const half = 0.02 * (0.8 + 0.4 * rng());
    return { value, low: value * (1 - half), high: value * (1 + half) };
  });
}

/** Exactly the expected steps, each within +/-1 night and with its ratio within a relative `tol`. */
function assertSteps(
  fit: StepFit,
  expected: readonly { index: number; ratio: number }[],
  tol: number,
  label: string,
): void {
  const found = fit.changePoints.map((c) => `${c.index}:${c.ratio.toFixed(3)}`).join(', ');
  assert.equal(fit.changePoints.length, expected.length, `${label}: found [${found}]`);
  expected.forEach((e, k) => {
    const c = fit.changePoints[k]!;
    assert.ok(Math.abs(c.index - e.index) <= 1, `${label}: step ${k} at ${c.index}, expected ${e.index} +/- 1`);
    assert.ok(Math.abs(c.ratio / e.ratio - 1) <= tol, `${label}: step ${k} ratio ${c.ratio}, expected ${e.ratio}`);
  });
}

describe('detectChangePoints: planted steps', () => {
  it('finds a 15% regression from night 20 in every seed, and only that', () => {
    // "Night 20" is 1-based: index 19 is the first regressed night.
    for (let seed = 1; seed <= SEEDS; seed++) {
      const fit = detectChangePoints(nights(seed, 30, (i) => (i >= 19 ? 0.85 : 1)));
      assertSteps(fit, [{ index: 19, ratio: 0.85 }], RATIO_TOL, `seed ${seed}`);
    }
  });

  it('finds a 20% improvement with its ratio', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const fit = detectChangePoints(nights(seed + 1000, 30, (i) => (i >= 12 ? 1.2 : 1)));
      assertSteps(fit, [{ index: 12, ratio: 1.2 }], RATIO_TOL, `seed ${seed}`);
      assert.equal(fit.changePoints[0]!.after, fit.segments[1]!.level);
    }
  });

  it('finds two steps (+20%, then -25%)', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const fit = detectChangePoints(nights(seed + 2000, 45, (i) => (i >= 30 ? 0.9 : i >= 15 ? 1.2 : 1)));
      assertSteps(
        fit,
        [
          { index: 15, ratio: 1.2 },
          { index: 30, ratio: 0.75 },
        ],
        RATIO_TOL,
        `seed ${seed}`,
      );
      assert.deepEqual(
        fit.segments.map((s) => s.end),
        [fit.changePoints[0]!.index, fit.changePoints[1]!.index, 45],
      );
    }
  });
});

describe('detectChangePoints: noise and outliers', () => {
  it('marks no step in pure noise: 30 and 200 nights', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      for (const n of [30, 200]) {
        const fit = detectChangePoints(nights(seed + 3000, n));
        assertSteps(fit, [], 0, `seed ${seed}, ${n} nights`);
        // The noise estimate is near the sd of u (0.03 / sqrt(3) = 0.0173).
        assert.ok(fit.noise > 0.007 && fit.noise < 0.035, `noise ${fit.noise}`);
      }
    }
  });

  it('treats a single-night 0.5x blip as an outlier, on the first night or in the middle', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      for (const at of [0, 14]) {
        const fit = detectChangePoints(nights(seed + 4000, 30, (i) => (i === at ? 0.5 : 1)));
        assertSteps(fit, [], 0, `seed ${seed}, blip at ${at}`);
        assert.ok(Math.abs(fit.segments[0]!.level / 1000 - 1) < 0.03, 'the L1 level ignores the blip');
      }
    }
  });

  it('reports a drop on the latest night as a step: it may be the start of a new level', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const fit = detectChangePoints(nights(seed + 5000, 30, (i) => (i === 29 ? 0.5 : 1)));
      assertSteps(fit, [{ index: 29, ratio: 0.5 }], ONE_NIGHT_TOL, `seed ${seed}`);
    }
  });
});

describe('detectChangePoints: CI weights', () => {
  const withLastCi = (points: SeriesPoint[], half: number): SeriesPoint[] =>
    points.map((p, i) =>
      i === points.length - 1 ? { value: p.value, low: p.value * (1 - half), high: p.value * (1 + half) } : p,
    );

  it('lets a latest night with a narrow CI make a step that a wide CI does not', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const points = nights(seed + 6000, 30, (i) => (i === 29 ? 0.8 : 1));
      // +/-0.2% is 10x narrower than the others (weight clipped to 4); +/-20% is 10x wider (1/4).
      assertSteps(
        detectChangePoints(withLastCi(points, 0.002)),
        [{ index: 29, ratio: 0.8 }],
        ONE_NIGHT_TOL,
        `narrow, seed ${seed}`,
      );
      assertSteps(detectChangePoints(withLastCi(points, 0.2)), [], 0, `wide, seed ${seed}`);
    }
  });

  it('takes levels as weighted medians: a narrow CI pulls the level to its point', () => {
    const values = [100, 110, 120];
    const plain = detectChangePoints(
      values.map((value) => ({ value })),
      { penalty: 1 },
    );
    assert.equal(plain.segments[0]!.level, 110);
    // Weights relative to the median: 1, 1 and 4 (20x narrower, clipped), so 120 holds 4 of 6.
    const cis = [0.1, 0.1, 0.005].map((h, i) => ({
      value: values[i]!,
      low: values[i]! * (1 - h),
      high: values[i]! * (1 + h),
    }));
    assert.deepEqual(detectChangePoints(cis, { penalty: 1 }).segments, [{ start: 0, end: 3, level: 120 }]);
  });
});

/** The documented weights: 1 / sigma of the log-CI over its median, clipped to [1/4, 4]. */
function documentedWeights(points: readonly { value: number; low: number; high: number }[]): number[] {
  const raw = points.map((p) => 3.92 / Math.log(p.high / p.low));
  const mid = [...raw].sort((a, b) => a - b)[raw.length >> 1]!;
  return raw.map((r) => Math.min(4, Math.max(0.25, r / mid)));
}

/** Minimum of sum w |ln v - level| + penalty x #segments over all segmentations (short levels only last). */
function bruteForce(y: readonly number[], w: readonly number[], penalty: number): number {
  const n = y.length;
  const around = (s: number, e: number, mu: number) =>
    y.slice(s, e).reduce((a, v, k) => a + w[s + k]! * Math.abs(v - mu), 0);
  // The weighted L1 optimum is at one of the segment's own values.
  const cost = (s: number, e: number) => Math.min(...y.slice(s, e).map((mu) => around(s, e, mu))) + penalty;
  const best = (s: number): number => {
    let min = Infinity;
    for (let e = s + 1; e <= n; e++)
      if (e - s >= MIN_LEVEL_NIGHTS || e === n) min = Math.min(min, cost(s, e) + (e === n ? 0 : best(e)));
    return min;
  };
  return best(0);
}

describe('detectChangePoints: exactness and scale', () => {
  it('reaches the brute-force optimum of the weighted L1 Potts objective', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const rng = createRng(seed + 7000);
      const points = Array.from({ length: 11 }, (_, i) => {
        const value = (i > 6 ? 1.3 : 1) * (1 + (rng() - 0.5) * 0.2);
        const half = 0.002 + 0.1 * rng() ** 2;
        return { value, low: value * (1 - half), high: value * (1 + half) };
      });
      const y = points.map((p) => Math.log(p.value));
      const w = documentedWeights(points);
      const penalty = 0.02 + 0.2 * rng();
      const fit = detectChangePoints(points, { penalty, minRelativeStep: 0 });
      const objective = fit.segments.reduce(
        (a, s) =>
          a +
          penalty +
          y.slice(s.start, s.end).reduce((b, v, k) => b + w[s.start + k]! * Math.abs(v - Math.log(s.level)), 0),
        0,
      );
      const optimum = bruteForce(y, w, penalty);
      assert.ok(Math.abs(objective - optimum) < 1e-9, `seed ${seed}: ${objective} vs ${optimum}`);
    }
  });

  it('fits 1000 nights with two steps', () => {
    const fit = detectChangePoints(nights(8000, 1000, (i) => (i >= 600 ? 0.9 : i >= 250 ? 1.05 : 1)));
    assertSteps(
      fit,
      [
        { index: 250, ratio: 1.05 },
        { index: 600, ratio: 0.9 / 1.05 },
      ],
      0.015,
      '1000 nights',
    );
    assert.equal(fit.segments.at(-1)!.end, 1000);
  });

  it('gives no steps with fewer than 3 points', () => {
    assert.deepEqual(detectChangePoints([]).segments, []);
    assert.deepEqual(detectChangePoints([{ value: 5 }]).segments, [{ start: 0, end: 1, level: 5 }]);
    assert.deepEqual(detectChangePoints([{ value: 5 }, { value: 50 }], { penalty: 0 }).changePoints, []);
  });
});

describe('detectChangePoints: input errors', () => {
  const ok = { value: 1 };
  const cases: [SeriesPoint, RegExp][] = [
    [{ value: 0 }, /points\[1\]\.value must be a positive finite number .* got 0/],
    [{ value: -3 }, /got -3/],
    [{ value: Number.NaN }, /got NaN/],
    [{ value: Infinity }, /got Infinity/],
    [{ value: 1, low: 0.9 }, /points\[1\]: give both low and high of the CI or neither/],
    [{ value: 1, low: 1.1, high: 0.9 }, /0 < low <= high/],
    [{ value: 1, low: 0, high: 2 }, /0 < low <= high/],
  ];
  for (const [bad, message] of cases) {
    it(`rejects value ${bad.value}, low ${bad.low}, high ${bad.high}`, () => {
      assert.throws(
        () => detectChangePoints([ok, bad, ok]),
        (e: unknown) => e instanceof RangeError && message.test(e.message),
      );
    });
  }
  it('accepts null CI bounds as "no CI" and rejects bad options', () => {
    assert.equal(detectChangePoints([ok, { value: 1, low: null, high: null }, ok]).changePoints.length, 0);
    assert.throws(
      () => detectChangePoints([ok, ok, ok], { penalty: -1 }),
      /`penalty` option to be a non-negative finite number, got -1/,
    );
    assert.throws(
      () => detectChangePoints([ok, ok, ok], { minRelativeStep: Number.NaN }),
      /`minRelativeStep`.*got NaN/,
    );
  });
});
