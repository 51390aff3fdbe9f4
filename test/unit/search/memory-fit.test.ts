// Memory fits and predictions against exact values.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  batchForMemory,
  fitLinear,
  fitQuadratic,
  headroomUsed,
  predictLimit,
  predictWithSpread,
} from '../../../harness/search/memory-fit.js';

describe('memory fits', () => {
  it('fits an exact line with zero residual', () => {
    const fit = fitLinear([
      { batch: 10, bytes: 1100 },
      { batch: 20, bytes: 1200 },
      { batch: 40, bytes: 1400 },
    ])!;
    assert.equal(fit.slope, 10);
    assert.equal(fit.intercept, 1000);
    assert.equal(fit.relativeResidual, 0);
    assert.equal(fit.sigma, 0);
  });

  it('predicts the limit from the two readings nearest it', () => {
    // 1000 + 10 b reaches 2000 at b = 100.
    assert.equal(
      predictLimit(
        [
          { batch: 10, bytes: 1100 },
          { batch: 50, bytes: 1500 },
        ],
        2000,
      ),
      100,
    );
    // Flat top (an allocator step): the chord from the smallest reading is used.
    assert.equal(
      predictLimit(
        [
          { batch: 10, bytes: 1000 },
          { batch: 40, bytes: 1600 },
          { batch: 50, bytes: 1600 },
        ],
        2000,
      ),
      50 + 400 / 15,
    );
  });

  it('solves a clean parabola instead of a line', () => {
    const readings = [8, 64, 512, 4096].map((b) => ({ batch: b, bytes: 1e6 + 100 * b + 0.01 * b * b }));
    assert.ok(fitQuadratic(readings)!.relativeResidual < 1e-9);
    const p = predictWithSpread(readings, 1e6 + 100 * 10_000 + 0.01 * 1e8)!;
    assert.ok(Math.abs(p.batch - 10_000) < 1, `predicted ${p.batch}`);
    assert.equal(p.spread, 0);
  });

  it('gives noisy readings a spread instead of a point', () => {
    const readings = [1000, 2000, 3000, 4000].map((b, i) => ({
      batch: b,
      bytes: 1e9 + 1e5 * b + (i % 2 ? 3e6 : -3e6),
    }));
    const p = predictWithSpread(readings, 1e9 + 1e5 * 10_000)!;
    assert.ok(p.spread > 0);
    assert.ok(Math.abs(p.batch - 10_000) < p.spread * 2);
  });

  it('measures headroom used and interpolates a batch for a memory target', () => {
    const readings = [
      { batch: 0, bytes: 100 },
      { batch: 10, bytes: 200 },
    ];
    assert.equal(headroomUsed(readings, 300), 0.5);
    assert.equal(batchForMemory(readings, 150), 5);
    assert.equal(batchForMemory(readings, 50), undefined);
  });
});
