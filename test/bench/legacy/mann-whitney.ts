// Frozen copy of harness/stats/mann-whitney.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// The Mann-Whitney U test (Mann & Whitney 1947) with a two-sided p-value. simple-statistics gives
// the rank sum (midranks for ties); the p-value is computed here: exactly, by counting the
// permutation distribution of U, for small samples without ties, and otherwise by the normal
// approximation with the tie correction and a continuity correction (Lehmann 1975, ch. 1).
import { wilcoxonRankSum } from 'simple-statistics';
import { normalCdf, uDistribution } from './mann-whitney-exact.js';

export interface MannWhitney {
  /** U of the first sample: the number of pairs (x, y) with x > y, ties counting 1/2. */
  u: number;
  /** min(U1, U2), the statistic that tables list. */
  uMin: number;
  /** Two-sided p-value. */
  p: number;
  method: 'exact' | 'normal';
}

/** Largest n1 * n2 for which the exact distribution is counted (the table has n1 * n2 + 1 entries). */
const EXACT_LIMIT = 2500;

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
  const mean = (n1 * n2) / 2;
  const tieTerm = tieGroups.reduce((a, t) => a + (t ** 3 - t), 0) / (n * (n - 1));
  const variance = ((n1 * n2) / 12) * (n + 1 - tieTerm);
  if (variance <= 0) return { u, uMin, p: 1, method: 'normal' };
  const z = Math.max(0, Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
  return { u, uMin, p: Math.min(1, 2 * (1 - normalCdf(z))), method: 'normal' };
}

export { normalCdf, uDistribution };
