// The band model of a batch limit that moves between identical runs: its normal tails, its fit on runs
// drawn from a known band, and the max it allows within a chance of failing a run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fitBand, largestWithin, type BandRun } from '../../../harness/search/band-model.js';
import { createRng } from '../../../harness/stats/rng.js';
import { lnNormalCdf, normalCdf, normalQuantile } from '../../../harness/stats/proportion.js';

/** Runs at `batches` (each `n` times) whose limits are drawn from Normal(mu, sigma). */
function drawn(seed: number, mu: number, sigma: number, batches: number[], n: number): BandRun[] {
  const rng = createRng(seed);
  const runs: BandRun[] = [];
  for (const b of batches)
    for (let i = 0; i < n; i++) {
      const limit = mu + sigma * normalQuantile(Math.min(1 - 1e-12, Math.max(1e-12, rng())));
      runs.push({ batch: b, ok: limit >= b });
    }
  return runs;
}

describe('normal tails', () => {
  it('matches tabulated values and stays finite far into the lower tail', () => {
    assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
    assert.ok(Math.abs(normalCdf(-1.959964) - 0.025) < 1e-7);
    assert.ok(Math.abs(normalCdf(1) - 0.8413447) < 1e-7);
    // ln P(Z <= -40) = -800 - ln(40 sqrt(2 pi)) - ln(1 - 1/40^2 + ...): -804.608
    assert.ok(Math.abs(lnNormalCdf(-40) + 804.608) < 0.01, String(lnNormalCdf(-40)));
    assert.ok(lnNormalCdf(9) < 0 && lnNormalCdf(9) > -1e-15);
  });
});

describe('fitBand', () => {
  it('has nothing to fit when every run passed or every run failed', () => {
    assert.equal(
      fitBand([
        { batch: 100, ok: true },
        { batch: 200, ok: true },
      ]),
      undefined,
    );
    assert.equal(fitBand([{ batch: 100, ok: false }]), undefined);
  });

  it('gives a risk that grows with the batch, from about 0 far below the band to about 1 far above', () => {
    const fit = fitBand(drawn(1, 5000, 50, [4900, 4950, 5000, 5050, 5100], 6))!;
    let last = 0;
    for (let b = 4500; b <= 5500; b += 25) {
      const r = fit.risk(b);
      assert.ok(r >= last - 1e-12, `risk(${b}) = ${r} < ${last}`);
      last = r;
    }
    assert.ok(fit.risk(4500) < 1e-4 && fit.risk(5500) > 0.999);
  });

  it('recovers a known band from 60 runs, and the max it allows is below it by the spread', () => {
    const mu = 5600;
    const sigma = 40;
    const fit = fitBand(drawn(7, mu, sigma, [5500, 5540, 5580, 5620, 5660, 5700], 10))!;
    assert.ok(Math.abs(fit.limit - mu) < 20, `limit ${fit.limit}`);
    assert.ok(fit.spread > sigma / 2 && fit.spread < sigma * 2, `spread ${fit.spread}`);
    const k = largestWithin(fit, 0.02, 16, Math.ceil(5700 / 16));
    // The true chance that a run at the allowed max fails: within a few times the target, never a coin flip.
    const trueRisk = normalCdf((k * 16 - mu) / sigma);
    assert.ok(trueRisk < 0.06, `max ${k * 16}: true risk ${trueRisk}`);
    assert.ok(k * 16 > mu - 4 * sigma, `max ${k * 16} is more than 4 spreads below the limit`);
  });

  it('needs a wider margin from few runs than from many, on the same band', () => {
    const few = fitBand(drawn(3, 5600, 40, [5600, 5616], 3))!;
    const many = fitBand(drawn(3, 5600, 40, [5520, 5560, 5600, 5640, 5680], 12))!;
    const kFew = largestWithin(few, 0.02, 16, 5616 / 16);
    const kMany = largestWithin(many, 0.02, 16, 5700 / 16);
    assert.ok(kFew < kMany, `few runs allowed ${kFew * 16}, many ${kMany * 16}`);
  });
});

describe('largestWithin', () => {
  it('is 0 when even the smallest batch is over the risk, and stays below the failure it is given', () => {
    const fit = fitBand([
      { batch: 16, ok: true },
      { batch: 32, ok: false },
    ])!;
    assert.equal(largestWithin(fit, 1e-9, 16, 2), 0);
    const sharp = fitBand([
      ...Array.from({ length: 5 }, () => ({ batch: 1600, ok: true })),
      ...Array.from({ length: 5 }, () => ({ batch: 3200, ok: false })),
    ])!;
    assert.equal(largestWithin(sharp, 0.5, 16, 100), 99, 'never at or above the failing multiple');
  });
});
