// The training recipe (batch x accumulation steps, learning-rate rules) and the card predictions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CARDS, predictCards, recipeBatches, ruleOfThumb, scaleLr } from '../../../harness/search/recipe.js';

describe('recipeBatches', () => {
  it('lists the divisors of the per-rank effective batch, largest first, none above the largest that fits', () => {
    assert.deepEqual(recipeBatches(256, 1, 200), [128, 64, 32, 16, 8, 4, 2, 1]);
    assert.deepEqual(recipeBatches(256, 1, 1000), [256, 128, 64, 32, 16, 8, 4, 2, 1]);
    // Two ranks: each rank's share is 128.
    assert.deepEqual(recipeBatches(256, 2, 100).slice(0, 2), [64, 32]);
    assert.deepEqual(recipeBatches(96, 1, 40).slice(0, 3), [32, 24, 16]);
  });
  it('has nothing when the ranks do not divide the effective batch', () => {
    assert.deepEqual(recipeBatches(100, 3, 50), []);
  });
});

describe('scaleLr', () => {
  it("follows seed 004's example: 2e-5 at 8 to 32 is 8e-5 linear, 4e-5 square-root", () => {
    const r = scaleLr(2e-5, 8, 32);
    assert.ok(Math.abs(r.linear - 8e-5) < 1e-18);
    assert.ok(Math.abs(r.sqrt - 4e-5) < 1e-18);
  });
});

describe('predictCards', () => {
  it('predicts from fixed + per-sample memory, rounded down to the multiple, beside the rule of thumb', () => {
    const GiB = 2 ** 30;
    // 4 GiB fixed, 256 MiB per sample: a 16 GiB card holds 48 samples, an 80 GiB card 304.
    const readings = [8, 16, 32].map((batch) => ({ batch, bytes: 4 * GiB + batch * 256 * 2 ** 20 }));
    const p = predictCards(readings, 8)!;
    assert.ok(Math.abs(p.fixed - 4 * GiB) < 1 && Math.abs(p.perSample - 256 * 2 ** 20) < 1e-3);
    assert.deepEqual(
      p.rows.map((r) => r.predicted),
      [48, 80, 144, 304, 544],
    );
    assert.deepEqual(
      p.rows.map((r) => r.ruleOfThumb),
      CARDS.map((c) => ruleOfThumb(c.gb)),
    );
    assert.equal(ruleOfThumb(24), 30);
  });
  it('predicts nothing from readings that do not rise, and null for a card below the fixed part', () => {
    assert.equal(
      predictCards(
        [
          { batch: 8, bytes: 100 },
          { batch: 16, bytes: 100 },
        ],
        8,
      ),
      undefined,
    );
    const big = predictCards(
      [
        { batch: 1, bytes: 20 * 2 ** 30 },
        { batch: 2, bytes: 20 * 2 ** 30 + 1 },
      ],
      1,
    )!;
    assert.equal(big.rows[0]!.predicted, null, '16 GB holds not even the fixed 20 GiB');
  });
});
