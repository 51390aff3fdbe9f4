// Configs compared in rounds, with the round as a block: a two-way additive layout (config + round)
// of per-trial log-throughput. A round's common load (a neighbour on the machine, thermal state)
// is a block effect and drops out; the residual variance, pooled over configs, has
// (k - 1)(n - 1) degrees of freedom, so three rounds of six configs already give 10. Pairwise
// comparisons use it (Fisher's LSD form); callers correct for multiplicity (the race compares each
// config with the best of the others, Hsu 1984, with a Bonferroni bound over k - 1 comparisons).
// F-race (Birattari et al. 2002) blocks by instance in the same way with a rank test.
import { tCdf, tQuantile } from './student-t.js';

export interface BlockedLayout {
  /** Mean log value of each config over the rounds. */
  means: number[];
  /** Residual variance of the two-way additive model (log scale). */
  mse: number;
  df: number;
  /** Rounds (blocks). */
  n: number;
}

/** `y[config][round]`: log values, every config measured in every round. Null when there is no residual df. */
export function blockedLayout(y: readonly (readonly number[])[]): BlockedLayout | null {
  const k = y.length;
  const n = k > 0 ? y[0]!.length : 0;
  if (k < 2 || n < 2 || y.some((r) => r.length !== n)) return null;
  const means = y.map((r) => r.reduce((a, b) => a + b, 0) / n);
  const roundMeans = Array.from({ length: n }, (_, j) => y.reduce((a, r) => a + r[j]!, 0) / k);
  const grand = means.reduce((a, b) => a + b, 0) / k;
  let ss = 0;
  for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) ss += (y[i]![j]! - means[i]! - roundMeans[j]! + grand) ** 2;
  const df = (k - 1) * (n - 1);
  return { means, mse: ss / df, df, n };
}

export interface BlockedDifference {
  /** exp(mean_i - mean_j): config i's throughput over config j's. */
  ratio: number;
  low: number;
  high: number;
  /** One-sided p-value of "i is not slower than j" (small when i is slower). */
  pSlower: number;
}

/** Config i against config j, with a two-sided (1 - alpha) interval of the ratio. */
export function blockedDifference(layout: BlockedLayout, i: number, j: number, alpha: number): BlockedDifference {
  const d = layout.means[i]! - layout.means[j]!;
  const se = Math.sqrt((2 * layout.mse) / layout.n);
  if (se === 0) return { ratio: Math.exp(d), low: Math.exp(d), high: Math.exp(d), pSlower: d < 0 ? 0 : 1 };
  const q = tQuantile(1 - alpha / 2, layout.df);
  return {
    ratio: Math.exp(d),
    low: Math.exp(d - q * se),
    high: Math.exp(d + q * se),
    pSlower: tCdf(d / se, layout.df),
  };
}

/** Pairs among k configs: the Bonferroni divisor for statements about any pair. */
export function pairCount(k: number): number {
  return Math.max(1, (k * (k - 1)) / 2);
}
