// The undecided sentence says where the CI really lies, ratios never round onto 1, and the rounds
// that would decide follow from the half-width shrinking as 1/sqrt(rounds).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectable, fmtRatio, undecidedCi } from '../../../harness/analysis/undecided.js';

const ci = (low: number, high: number, estimate = Math.sqrt(low * high)) => ({ estimate, low, high, level: 0.95 });

describe('undecided CIs in words', () => {
  it('a CI below 1 that reaches into the band (upper end 0.9955) is not said to reach 1', () => {
    const s = undecidedCi(ci(0.93, 0.9955), 0.02);
    assert.match(s, /^the CI \[0\.93x, 0\.996x\] lies below 1 but reaches inside the noise band \+\/-2\.0%/);
    assert.doesNotMatch(s, /reaches both 1|1\.00x/);
  });

  it('each side of 1 and each band edge gets its own clause', () => {
    assert.match(undecidedCi(ci(1.005, 1.08), 0.02), /lies above 1 but reaches inside the noise band/);
    assert.match(undecidedCi(ci(0.9, 1.01), 0.02), /includes 1 but reaches below the noise band/);
    assert.match(undecidedCi(ci(0.99, 1.1), 0.02), /includes 1 but reaches above the noise band/);
    assert.match(undecidedCi(ci(0.5, 1.7), 0.02), /includes 1 and reaches past both edges/);
  });

  it('fmtRatio keeps the side of 1 and of the band edges', () => {
    assert.equal(fmtRatio(0.9955), '0.996x');
    assert.equal(fmtRatio(1.004), '1.004x');
    assert.equal(fmtRatio(0.93), '0.93x');
    assert.equal(fmtRatio(1), '1.00x');
    assert.equal(fmtRatio(0.9799, 0.02), '0.9799x');
    assert.equal(fmtRatio(12.34), '12.3x');
  });
});

describe('detectable', () => {
  it('gives the thresholds of a CI of this half-width and the rounds that decide the estimate', () => {
    // Half-width 0.05 on the log scale after 10 rounds, estimate 3% slower, band 2%.
    const h = 0.05;
    const est = 0.97;
    const d = detectable(ci(est * Math.exp(-h), est * Math.exp(h), est), 0.02, 10)!;
    assert.ok(Math.abs(d.half_width - h) < 1e-12);
    assert.ok(Math.abs(d.faster_above - 1.02 * Math.exp(h)) < 1e-12);
    assert.ok(Math.abs(d.slower_below - 0.98 * Math.exp(-h)) < 1e-12);
    // Deciding "slower" needs a half-width of ln(0.98) - ln(0.97): 10 * (h / need)^2 rounds.
    const need = Math.log(0.98) - Math.log(0.97);
    assert.equal(d.rounds_to_decide, Math.ceil(10 * (h / need) ** 2));
    assert.equal(d.rounds_to_decide, 238);
  });

  it('an estimate inside the band is decided by showing the CI within it; one on an edge never is', () => {
    const inside = detectable(ci(0.96, 1.04, 1), 0.02, 8)!;
    assert.equal(inside.rounds_to_decide, Math.ceil(8 * ((Math.log(1.04) - Math.log(0.96)) / 2 / Math.log(1.02)) ** 2));
    const edge = detectable(ci(0.95, 1.011, 0.98), 0.02, 8)!;
    assert.equal(edge.rounds_to_decide, null);
    assert.equal(detectable(ci(0.9, 1.1), 0.02, 0), null);
  });
});
