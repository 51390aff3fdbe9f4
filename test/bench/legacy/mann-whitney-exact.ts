// The Mann-Whitney U test with exact p-values, used by no harness code since claims report the sequential CI;
// kept for the calibration benchmark's legacy copy (mann-whitney.ts) and its unit tests.
// The Mann-Whitney U test (Mann & Whitney 1947) with a two-sided p-value. simple-statistics gives
// the rank sum (midranks for ties); the p-value is computed here: exactly, by counting the
// permutation distribution of U for small samples (over the midranks when there are ties, so
// [1,1,1] vs [2,2,2] gives the exact 0.1), and otherwise by the normal approximation with the tie
// correction and a continuity correction (Lehmann 1975, ch. 1).
import { erf, wilcoxonRankSum } from 'simple-statistics';

export interface MannWhitney {
  /** U of the first sample: the number of pairs (x, y) with x > y, ties counting 1/2. */
  u: number;
  /** min(U1, U2), the statistic that tables list. */
  uMin: number;
  /** Two-sided p-value. */
  p: number;
  method: 'exact' | 'exact-ties' | 'normal';
}

/** Largest n1 * n2 for which the exact distribution is counted (the table has n1 * n2 + 1 entries). */
const EXACT_LIMIT = 2500;
/** Largest n1 + n2 for which the exact permutation distribution over midranks is counted when there are ties. */
const EXACT_TIES_LIMIT = 60;

export function mannWhitney(x: readonly number[], y: readonly number[]): MannWhitney {
  const n1 = x.length;
  const n2 = y.length;
  if (n1 === 0 || n2 === 0) throw new Error('mannWhitney: both samples need at least one value');
  const r1 = wilcoxonRankSum([...x], [...y]);
  const u = r1 - (n1 * (n1 + 1)) / 2;
  const uMin = Math.min(u, n1 * n2 - u);
  const all = [...x, ...y].sort((a, b) => a - b);
  const tieGroups: number[] = [];
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1] === all[i]) j++;
    if (j > i) tieGroups.push(j - i + 1);
    i = j + 1;
  }
  if (tieGroups.length === 0 && n1 * n2 <= EXACT_LIMIT) {
    const counts = uDistribution(n1, n2);
    const total = counts.reduce((a, b) => a + b, 0);
    let tail = 0;
    for (let k = 0; k <= uMin; k++) tail += counts[k]!;
    return { u, uMin, p: Math.min(1, (2 * tail) / total), method: 'exact' };
  }
  const n = n1 + n2;
  if (n <= EXACT_TIES_LIMIT) return { u, uMin, p: exactTiesP(x, y), method: 'exact-ties' };
  const mean = (n1 * n2) / 2;
  const tieTerm = tieGroups.reduce((a, t) => a + (t ** 3 - t), 0) / (n * (n - 1));
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm);
  if (variance <= 0) return { u, uMin, p: 1, method: 'normal' };
  const z = Math.max(0, Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
  return { u, uMin, p: Math.min(1, 2 * (1 - normalCdf(z))), method: 'normal' };
}

/** Standard normal CDF from erf (simple-statistics' table lookup is rounded to 4 places). */
export function normalCdf(z: number): number {
  return 0.5 * (1 + erf(z / Math.SQRT2));
}

/**
 * The number of arrangements of n1 x's and n2 y's giving each U = 0 .. n1 * n2, by the recurrence
 * f(n1, n2, u) = f(n1 - 1, n2, u - n2) + f(n1, n2 - 1, u) (the largest value is an x or a y).
 */
export function uDistribution(n1: number, n2: number): number[] {
  // table[j][u] = f(i, j, u) for the current i.
  let table: number[][] = Array.from({ length: n2 + 1 }, () => [1]);
  for (let i = 1; i <= n1; i++) {
    const next: number[][] = [[1]];
    for (let j = 1; j <= n2; j++) {
      const size = i * j + 1;
      const row = new Array<number>(size).fill(0);
      const withoutX = table[j]!; // f(i - 1, j, .), shifted by j
      const withoutY = next[j - 1]!; // f(i, j - 1, .)
      for (let u = 0; u < size; u++) row[u] = (u >= j ? (withoutX[u - j] ?? 0) : 0) + (withoutY[u] ?? 0);
      next.push(row);
    }
    table = next;
  }
  return table[n2]!;
}

/**
 * Exact two-sided permutation p-value of the rank sum with midranks: the share of the C(n1 + n2, n1)
 * ways to pick the first sample whose rank sum lies at least as far from its mean as the observed
 * one. Doubled midranks are integers, so the distribution is counted by dynamic programming.
 */
export function exactTiesP(x: readonly number[], y: readonly number[]): number {
  const all = [...x.map((v) => ({ v, first: true })), ...y.map((v) => ({ v, first: false }))].sort((a, b) => a.v - b.v);
  const doubled = new Array<number>(all.length);
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    // Ranks i+1 .. j+1 share their mean; doubled, (i + 1) + (j + 1).
    for (let k = i; k <= j; k++) doubled[k] = i + j + 2;
    i = j + 1;
  }
  const n = all.length;
  const n1 = x.length;
  const maxSum = n * (n + 1);
  const observed = all.reduce((a, e, i) => a + (e.first ? doubled[i]! : 0), 0);
  const mean = n1 * (n + 1);
  // counts[k][s]: ways to pick k of the values seen so far with doubled rank sum s.
  const counts = Array.from({ length: n1 + 1 }, () => new Float64Array(maxSum + 1));
  counts[0]![0] = 1;
  for (let i = 0; i < n; i++) {
    const r = doubled[i]!;
    for (let k = Math.min(i + 1, n1); k >= 1; k--) {
      const from = counts[k - 1]!;
      const to = counts[k]!;
      for (let s = maxSum; s >= r; s--) to[s]! += from[s - r]!;
    }
  }
  const dist = counts[n1]!;
  const far = Math.abs(observed - mean);
  let total = 0;
  let extreme = 0;
  for (let s = 0; s <= maxSum; s++) {
    total += dist[s]!;
    // A small tolerance: sums are integers, so ties at the same distance are counted as extreme.
    if (Math.abs(s - mean) >= far - 1e-9) extreme += dist[s]!;
  }
  return Math.min(1, extreme / total);
}
