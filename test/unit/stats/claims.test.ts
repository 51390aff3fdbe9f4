// The statistics behind claims: Mann-Whitney p-values against published tables, claim parsing,
// claim verdicts, the two-gate change decision and noise warnings.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootstrapMedian } from '../../../harness/stats/bootstrap.js';
import { ClaimSyntaxError, describeBand, judgeClaim, parseClaim } from '../../../harness/stats/claim.js';
import { decideChange } from '../../../harness/stats/decision.js';
import { mannWhitney, normalCdf, uDistribution } from '../../../harness/stats/mann-whitney.js';
import { noiseWarnings } from '../../../harness/stats/noise.js';
import { createRng } from '../../../harness/stats/rng.js';
import { throughputInterval } from '../../../harness/stats/throughput.js';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const ci = (estimate: number, low: number, high: number) => ({ estimate, low, high, level: 0.95 });

describe('Mann-Whitney U', () => {
  it('counts the exact null distribution of U', () => {
    // n1 = n2 = 5: 252 arrangements; the lower tail 1, 1, 2, 3, 5, 7, ... (Mann & Whitney 1947, table I).
    const d = uDistribution(5, 5);
    assert.equal(d.reduce((a, b) => a + b, 0), 252);
    assert.deepEqual(d.slice(0, 7), [1, 1, 2, 3, 5, 7, 9]);
    assert.equal(uDistribution(3, 2).length, 7);
  });

  it('gives exact two-sided p-values (R: wilcox.test(1:5, 6:10) gives p = 0.007937)', () => {
    const r = mannWhitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]);
    assert.equal(r.method, 'exact');
    assert.equal(r.u, 0);
    close(r.p, 2 / 252);
    close(mannWhitney([1, 2, 3, 5, 6], [4, 7, 8, 9, 10]).p, 8 / 252);
    close(mannWhitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]).p, 2 / 252, 1e-12);
    assert.equal(mannWhitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]).u, 25);
  });

  it('agrees with the published critical values of U (two-sided, alpha = 0.05)', () => {
    // Critical U from standard tables: significant at U <= critical, not at critical + 1.
    for (const [n1, n2, critical] of [[8, 8, 13], [10, 10, 23], [20, 20, 127], [5, 10, 8], [6, 9, 10]] as const) {
      const counts = uDistribution(n1, n2);
      const total = counts.reduce((a, b) => a + b, 0);
      const p = (u: number) => (2 * counts.slice(0, u + 1).reduce((a, b) => a + b, 0)) / total;
      assert.ok(p(critical) <= 0.05 && p(critical + 1) > 0.05, `n1=${n1} n2=${n2}: p(${critical}) = ${p(critical)}, p(${critical + 1}) = ${p(critical + 1)}`);
    }
  });

  it('uses the normal approximation with tie and continuity corrections when there are ties', () => {
    // U = 2, mean 8, variance (16/12)(9 - 24/56) = 11.43, z = 5.5 / 3.381 = 1.627: p = 0.1038.
    const r = mannWhitney([1, 2, 2, 3], [2, 4, 5, 6]);
    assert.equal(r.method, 'normal');
    assert.equal(r.u, 2);
    close(r.p, 0.10376, 5e-5);
    assert.equal(mannWhitney([1, 1, 1], [1, 1, 1]).p, 1);
    close(normalCdf(1.959964), 0.975, 1e-6);
    assert.throws(() => mannWhitney([], [1]), /at least one value/);
  });

  it('for large samples the approximation stays close to the exact test', () => {
    const rng = createRng(4);
    const x = Array.from({ length: 40 }, () => rng());
    const y = Array.from({ length: 40 }, () => rng() + 0.15);
    const exact = mannWhitney(x, y);
    const big = mannWhitney([...x, ...x.map((v) => v + 1e-9)], [...y, ...y.map((v) => v + 1e-9)]);
    assert.equal(exact.method, 'exact');
    assert.equal(big.method, 'normal');
    assert.ok(exact.p < 0.05 && big.p < exact.p, `${exact.p} ${big.p}`);
  });
});

describe('bootstrap determinism', () => {
  it('the same seed gives the same interval; another seed another', () => {
    const rng = createRng(1);
    const v = Array.from({ length: 30 }, () => rng());
    assert.deepEqual(bootstrapMedian(v, { seed: 11 }), bootstrapMedian(v, { seed: 11 }));
    const trials = [0, 1, 2].map(() => Array.from({ length: 12 }, () => ({ samples: 100, seconds: 0.1 + rng() * 0.02 })));
    assert.deepEqual(throughputInterval(trials, { seed: 11 }), throughputInterval(trials, { seed: 11 }));
    assert.notDeepEqual(throughputInterval(trials, { seed: 11 }), throughputInterval(trials, { seed: 12 }));
  });
});

describe('claims', () => {
  it('states the claimed band the way it reads, one-sided "slower" claims included', () => {
    const band = (text: string) => {
      const c = parseClaim(text);
      return describeBand(c.low, c.high, c.oneSided);
    };
    assert.equal(band('2-3x'), '2x to 3x');
    assert.equal(band('>=1.3x'), '>= 1.3x');
    // At least 10% slower: a speedup of at most 1/1.1, not ">= 0x".
    assert.equal(band('>= 10% slower'), '<= 0.909x');
    const slower = parseClaim('>= 10% slower');
    assert.equal(describeBand(slower.low, slower.high, true, (v) => v.toPrecision(3)), '<= 0.909x');
    assert.equal(describeBand(1.3, null, true, (v) => v.toPrecision(3)), '>= 1.30x');
  });
  it('parses every form people write', () => {
    const cases: [string, number, number, boolean][] = [
      ['2-3x', 2, 3, false],
      ['2-3x faster', 2, 3, false],
      ['1.5–2x', 1.5, 2, false],
      ['>=1.3x', 1.3, Infinity, true],
      ['at least 1.3x', 1.3, Infinity, true],
      ['8x', 8 / 1.1, 8.8, false],
      ['5-10% faster', 1.05, 1.1, false],
      ['~5-10% faster', 1.05, 1.1, false],
      ['30-50%', 1.3, 1.5, false],
      ['>= 20% faster', 1.2, Infinity, true],
      ['40-50% less time', 1 / 0.6, 2, false],
      ['10% slower', 1 / 1.1 / 1.1, (1 / 1.1) * 1.1, false],
      ['2 to 3x', 2, 3, false],
    ];
    for (const [text, low, high, oneSided] of cases) {
      const c = parseClaim(text);
      close(c.low, low, 1e-9);
      assert.equal(c.oneSided, oneSided, text);
      if (high === Infinity) assert.equal(c.high, Infinity);
      else close(c.high, high, 1e-9);
    }
    close(parseClaim('8x', 0.05).low, 8 / 1.05);
  });

  it('rejects malformed claims with a message that says what is wrong', () => {
    const bad: [string, RegExp][] = [
      ['fast', /not a speedup/],
      ['3-2x', /runs backwards/],
      ['>=2-3x', /">=" takes a single number/],
      ['5x less time', /ambiguous/],
      ['120% less time', /cannot shrink by 100%/],
      ['10% cheaper', /unknown direction "cheaper"/],
      ['0x', /must be positive/],
      ['', /not a speedup/],
    ];
    for (const [text, message] of bad) {
      assert.throws(() => parseClaim(text), (e: unknown) => e instanceof ClaimSyntaxError && message.test(e.message) && /expected a form such as/.test(e.message), text);
    }
  });

  it('confirms, refutes, or says why it cannot decide', () => {
    assert.equal(judgeClaim(parseClaim('2-3x'), ci(2.5, 2.4, 2.6)).verdict, 'confirmed');
    assert.equal(judgeClaim(parseClaim('5-10x'), ci(2.5, 2.4, 2.6)).verdict, 'refuted');
    assert.equal(judgeClaim(parseClaim('>=1.3x'), ci(1.5, 1.35, 1.7)).verdict, 'confirmed');
    assert.equal(judgeClaim(parseClaim('>=1.3x'), ci(1.1, 1.05, 1.2)).verdict, 'refuted');
    const noisy = judgeClaim(parseClaim('5-10% faster'), ci(1.07, 0.95, 1.2));
    assert.equal(noisy.verdict, 'inconclusive');
    assert.match(noisy.reason, /too noisy/);
    const edge = judgeClaim(parseClaim('2-3x'), ci(2.9, 2.85, 3.05));
    assert.equal(edge.verdict, 'inconclusive');
    assert.match(edge.reason, /straddles an edge/);
    assert.equal(judgeClaim(parseClaim('2x'), null).verdict, 'inconclusive');
  });
});

describe('two-gate change decision', () => {
  const base = [100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1];
  it('needs both p < 0.05 and a CI outside the noise band', () => {
    const slower = base.map((v) => v * 0.9);
    const d = decideChange(base, slower, ci(0.9, 0.89, 0.91));
    assert.equal(d.direction, 'lower');
    assert.ok(d.significant && d.outsideBand);
    // Significant but tiny: the CI reaches into the +/-1% band.
    const steady = [100, 100.02, 99.98, 100.01, 99.99, 100.03, 99.97, 100];
    const tiny = decideChange(steady, steady.map((v) => v * 0.995), ci(0.995, 0.992, 0.998));
    assert.ok(tiny.significant);
    assert.equal(tiny.direction, 'same');
    assert.match(tiny.reason, /noise band/);
    // Big but not significant (too few trials).
    const few = decideChange([100, 90], [80, 95], ci(0.85, 0.7, 0.97));
    assert.equal(few.direction, 'same');
    assert.match(few.reason, /not significant/);
  });
});

describe('noise warnings', () => {
  it('flags spread, a slow first trial and outliers, without dropping anything', () => {
    assert.deepEqual(noiseWarnings('a', [100, 101, 99, 100, 100]), []);
    assert.deepEqual(noiseWarnings('a', [100, 80, 120, 90, 110]).map((w) => w.kind), ['high-spread']);
    assert.deepEqual(noiseWarnings('a', [100, 50, 150, 70, 130]).map((w) => w.kind), ['very-high-spread']);
    assert.deepEqual(noiseWarnings('a', [70, 100, 101, 99, 100, 100.5]).map((w) => w.kind), ['slow-first-trial', 'outlier']);
    const outlier = noiseWarnings('arm x', [100, 101, 99, 100, 100.5, 99.5, 100.2, 160]);
    assert.deepEqual(outlier.map((w) => w.kind), ['outlier']);
    assert.match(outlier[0]!.message, /arm x: trial 8 \(160\) .* kept in the statistics/);
    assert.deepEqual(noiseWarnings('time', [1.5, 1, 1.01, 0.99, 1], false).map((w) => w.kind), ['slow-first-trial', 'outlier']);
  });
});
