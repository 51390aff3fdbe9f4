// The statistics behind claims: Mann-Whitney p-values against published tables (exact with ties),
// claim parsing (metric from the words, log-scale tolerance), directional verdicts and noise warnings.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  CLAIM_WORDS,
  CLAIM_WORDS_DOC,
  ClaimSyntaxError,
  describeBand,
  judgeClaim,
  parseClaim,
} from '../../../harness/stats/claim.js';
import { ROOT } from '../../support/paths.js';
import { exactTiesP, mannWhitney, normalCdf, uDistribution } from '../../bench/legacy/mann-whitney-exact.js';
import { noiseWarnings } from '../../../harness/stats/noise.js';
import { createRng } from '../../../harness/stats/rng.js';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const ci = (estimate: number, low: number, high: number) => ({ estimate, low, high, level: 0.95 });

describe('Mann-Whitney U', () => {
  it('counts the exact null distribution of U', () => {
    // n1 = n2 = 5: 252 arrangements; the lower tail 1, 1, 2, 3, 5, 7, ... (Mann & Whitney 1947, table I).
    const d = uDistribution(5, 5);
    assert.equal(
      d.reduce((a, b) => a + b, 0),
      252,
    );
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
    for (const [n1, n2, critical] of [
      [8, 8, 13],
      [10, 10, 23],
      [20, 20, 127],
      [5, 10, 8],
      [6, 9, 10],
    ] as const) {
      const counts = uDistribution(n1, n2);
      const total = counts.reduce((a, b) => a + b, 0);
      const p = (u: number) => (2 * counts.slice(0, u + 1).reduce((a, b) => a + b, 0)) / total;
      assert.ok(
        p(critical) <= 0.05 && p(critical + 1) > 0.05,
        `n1=${n1} n2=${n2}: p(${critical}) = ${p(critical)}, p(${critical + 1}) = ${p(critical + 1)}`,
      );
    }
  });

  it('counts the exact permutation distribution over midranks for small samples with ties', () => {
    // [1,1,1] vs [2,2,2]: 20 ways to pick the first sample; only the two extreme ones are as far
    // from the mean rank sum: p = 2/20 (the normal approximation said 0.047).
    const r = mannWhitney([1, 1, 1], [2, 2, 2]);
    assert.equal(r.method, 'exact-ties');
    close(r.p, 0.1);
    // [1,2,2,3] vs [2,4,5,6]: U = 2; of the 70 splits, 8 lie as far from the mean (counted by hand
    // over the doubled midranks 2, 8, 8, 8, 10, 12, 14, 16): p = 8/70.
    const t = mannWhitney([1, 2, 2, 3], [2, 4, 5, 6]);
    assert.equal(t.u, 2);
    close(t.p, exactTiesP([1, 2, 2, 3], [2, 4, 5, 6]));
    close(t.p, 8 / 70);
    assert.equal(mannWhitney([1, 1, 1], [1, 1, 1]).p, 1);
  });

  it('uses the normal approximation with tie and continuity corrections for large samples with ties', () => {
    const x = Array.from({ length: 40 }, (_, i) => Math.floor(i / 4));
    const y = Array.from({ length: 40 }, (_, i) => Math.floor(i / 4) + 2);
    const r = mannWhitney(x, y);
    assert.equal(r.method, 'normal');
    assert.ok(r.p < 0.05);
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
    assert.equal(
      describeBand(1.3, null, true, (v) => v.toPrecision(3)),
      '>= 1.30x',
    );
  });

  it('parses every form people write, widening point claims on the log scale of the effect', () => {
    const e = (c: number, t = 0.2): [number, number] => [
      Math.exp(Math.log(c) / (1 + t)),
      Math.exp(Math.log(c) * (1 + t)),
    ];
    const cases: [string, number, number, boolean, 'speed' | 'memory'][] = [
      ['2-3x', 2, 3, false, 'speed'],
      ['2-3x faster', 2, 3, false, 'speed'],
      ['1.5–2x', 1.5, 2, false, 'speed'],
      ['>=1.3x', 1.3, Infinity, true, 'speed'],
      ['at least 1.3x', 1.3, Infinity, true, 'speed'],
      ['8x', ...e(8), false, 'speed'],
      ['5% faster', ...e(1.05), false, 'speed'],
      ['5-10% faster', 1.05, 1.1, false, 'speed'],
      ['~5-10% faster', 1.05, 1.1, false, 'speed'],
      ['30-50%', 1.3, 1.5, false, 'speed'],
      ['>= 20% faster', 1.2, Infinity, true, 'speed'],
      ['40-50% less time', 1 / 0.6, 2, false, 'speed'],
      ['20% lower latency', ...e(1 / 0.8), false, 'speed'],
      ['10% slower', e(1 / 1.1)[1], e(1 / 1.1)[0], false, 'speed'],
      ['2 to 3x', 2, 3, false, 'speed'],
      ['30% less memory', ...(e(0.7).reverse() as [number, number]), false, 'memory'],
      ['2x more memory', ...e(2), false, 'memory'],
      ['2x less memory', ...(e(0.5).reverse() as [number, number]), false, 'memory'],
      ['>= 20% less peak memory', 0, 0.8, true, 'memory'],
    ];
    for (const [text, low, high, oneSided, quantity] of cases) {
      const c = parseClaim(text);
      close(c.low, Math.min(low, high), 1e-9);
      assert.equal(c.oneSided, oneSided, text);
      assert.equal(c.quantity, quantity, text);
      if (high === Infinity) assert.equal(c.high, Infinity);
      else close(c.high, Math.max(low, high), 1e-9);
    }
    // A point claim's band never reaches 1, whatever the tolerance: "faster" cannot be a slowdown.
    for (const t of [0, 0.2, 0.5, 1])
      assert.ok(parseClaim('5% faster', t).low > 1 && parseClaim('5% slower', t).high < 1);
    close(parseClaim('8x', 0.05).low, Math.exp(Math.log(8) / 1.05));
  });

  it('rejects malformed claims and unknown words, listing the forms it understands', () => {
    const bad: [string, RegExp][] = [
      ['fast', /not a number followed by "x" or "%"/],
      ['3-2x', /runs backwards/],
      ['>=2-3x', /">=" takes a single number/],
      ['5x less time', /ambiguous/],
      ['120% less time', /cannot shrink by 100%/],
      ['10% cheaper', /unknown words "cheaper"/],
      ['2x more accuracy', /unknown words "more accuracy"/],
      ['2x better', /unknown words "better"/],
      ['0x', /must be positive/],
      ['1x', /no change/],
      ['', /not a number/],
    ];
    for (const [text, message] of bad) {
      assert.throws(
        () => parseClaim(text),
        (e: unknown) =>
          e instanceof ClaimSyntaxError &&
          message.test(e.message) &&
          /the forms understood are .*less memory/.test(e.message),
        text,
      );
    }
  });

  it('accepts every listed word with its meaning, and the docs list them all', () => {
    const same = (a: string, b: string) => {
      const [x, y] = [parseClaim(a), parseClaim(b)];
      assert.deepEqual([x.quantity, x.low, x.high], [y.quantity, y.low, y.high], `${a} = ${b}`);
    };
    same('30-50% quicker', '30-50% faster');
    same('30-50% Quicker.', '30-50%');
    same('2x speed-up', '2x');
    same('20% lower latency', '20% less time');
    same('10% longer', '10% slower');
    same('30% lower peak GPU memory usage', '30% less memory');
    same('30% VRAM savings', '30% less memory');
    same('2x larger RAM use', '2x more memory');
    for (const [meaning, words] of Object.entries(CLAIM_WORDS)) {
      for (const w of words) same(`20% ${w}`, `20% ${meaning}`);
    }
    // The claim words are documented in docs/compare-and-claims.md, under "### Claim words".
    const page = readFileSync(join(ROOT, 'docs', 'compare-and-claims.md'), 'utf8');
    const start = page.indexOf('### Claim words');
    assert.ok(start >= 0, 'docs/compare-and-claims.md has a "Claim words" section');
    const body = page.indexOf('\n', start) + 1;
    const next = page.slice(body).search(/^#{1,3} /m);
    const section = next < 0 ? page.slice(start) : page.slice(start, body + next);
    for (const doc of Object.values(CLAIM_WORDS_DOC)) assert.ok(section.includes(doc), `docs list ${doc}`);
  });

  it('rejects words off the list, naming the words it understands', () => {
    for (const text of [
      '30% snappier',
      '2x better',
      '10% cheaper',
      '2x more accurate',
      '20% less memory footprint',
      '20% fast',
    ]) {
      assert.throws(
        () => parseClaim(text),
        (e: unknown) =>
          e instanceof ClaimSyntaxError &&
          /unknown words/.test(e.message) &&
          e.message.includes(`faster: ${CLAIM_WORDS_DOC.faster}`) &&
          e.message.includes('less time: less time, shorter'),
        text,
      );
    }
  });

  it('confirms, falls short, exceeds, or says why it cannot decide', () => {
    assert.equal(judgeClaim(parseClaim('2-3x'), ci(2.5, 2.4, 2.6)).verdict, 'confirmed');
    const short = judgeClaim(parseClaim('5-10x'), ci(2.5, 2.4, 2.6));
    assert.equal(short.verdict, 'falls short');
    assert.match(short.reason, /below 5x to 10x: a smaller effect/);
    const over = judgeClaim(parseClaim('1.5-2x'), ci(2.5, 2.4, 2.6));
    assert.equal(over.verdict, 'exceeds');
    assert.match(over.reason, /above 1.5x to 2x: a larger effect than claimed/);
    assert.equal(judgeClaim(parseClaim('>=1.3x'), ci(1.5, 1.35, 1.7)).verdict, 'confirmed');
    assert.equal(judgeClaim(parseClaim('>=1.3x'), ci(1.1, 1.05, 1.2)).verdict, 'falls short');
    assert.equal(
      judgeClaim(parseClaim('>=1.3x'), ci(9, 8, 10)).verdict,
      'confirmed',
      'a one-sided claim cannot be exceeded',
    );
    // The opposite direction: a slowdown never confirms "faster", and the reason says so.
    const opposite = judgeClaim(parseClaim('5% faster'), ci(0.97, 0.95, 0.99));
    assert.equal(opposite.verdict, 'falls short');
    assert.match(opposite.reason, /the opposite direction/);
    // Slower and memory claims: "falls short" is on the side of 1.
    assert.equal(judgeClaim(parseClaim('30% less memory'), ci(0.9, 0.88, 0.92)).verdict, 'falls short');
    assert.equal(judgeClaim(parseClaim('30% less memory'), ci(0.7, 0.68, 0.72)).verdict, 'confirmed');
    assert.equal(judgeClaim(parseClaim('30% less memory'), ci(0.4, 0.38, 0.42)).verdict, 'exceeds');
    const noisy = judgeClaim(parseClaim('5-10% faster'), ci(1.07, 0.95, 1.2));
    assert.equal(noisy.verdict, 'inconclusive');
    assert.match(noisy.reason, /too noisy/);
    const edge = judgeClaim(parseClaim('2-3x'), ci(2.9, 2.85, 3.05));
    assert.equal(edge.verdict, 'inconclusive');
    assert.match(edge.reason, /straddles the edge 3x/);
    assert.equal(judgeClaim(parseClaim('2x'), null).verdict, 'inconclusive');
  });

  it('does not confirm a small claimed effect whose CI reaches into the noise band', () => {
    const claim = parseClaim('0.5-1.5% faster');
    const j = judgeClaim(claim, ci(1.009, 1.006, 1.012), 0.01);
    assert.equal(j.verdict, 'inconclusive');
    assert.match(j.reason, /noise band/);
    assert.equal(judgeClaim(claim, ci(1.009, 1.006, 1.012), 0).verdict, 'confirmed');
  });
});

describe('noise warnings', () => {
  it('flags spread, a slow first trial and outliers, without dropping anything', () => {
    assert.deepEqual(noiseWarnings('a', [100, 101, 99, 100, 100]), []);
    assert.deepEqual(
      noiseWarnings('a', [100, 80, 120, 90, 110]).map((w) => w.kind),
      ['high-spread'],
    );
    assert.deepEqual(
      noiseWarnings('a', [100, 50, 150, 70, 130]).map((w) => w.kind),
      ['very-high-spread'],
    );
    assert.deepEqual(
      noiseWarnings('a', [70, 100, 101, 99, 100, 100.5]).map((w) => w.kind),
      ['slow-first-trial', 'outlier'],
    );
    const outlier = noiseWarnings('arm x', [100, 101, 99, 100, 100.5, 99.5, 100.2, 160]);
    assert.deepEqual(
      outlier.map((w) => w.kind),
      ['outlier'],
    );
    assert.match(outlier[0]!.message, /arm x: trial 8 \(160\) .* kept in the statistics/);
    assert.deepEqual(
      noiseWarnings('time', [1.5, 1, 1.01, 0.99, 1], false).map((w) => w.kind),
      ['slow-first-trial', 'outlier'],
    );
  });
});
