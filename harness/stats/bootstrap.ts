// Percentile bootstrap confidence interval of a median (Efron & Tibshirani 1993, ch. 13), seeded.
import { median, quantileSorted } from 'simple-statistics';
import { createRng } from './rng.js';

/** Resamples per interval; at least 10,000 keeps the 2.5% tail stable to about a percent. */
export const BOOTSTRAP_RESAMPLES = 10_000;

export interface Interval {
  estimate: number;
  low: number;
  high: number;
  level: number;
}

/** CI of the median of `values`; the same seed and data always give the same interval. */
export function bootstrapMedian(values: readonly number[], opts: { seed?: number; resamples?: number; level?: number } = {}): Interval | null {
  if (values.length === 0) return null;
  const level = opts.level ?? 0.95;
  const estimate = median([...values]);
  if (values.length === 1) return { estimate, low: estimate, high: estimate, level };
  const rng = createRng(opts.seed ?? 1);
  const resamples = opts.resamples ?? BOOTSTRAP_RESAMPLES;
  const medians = new Float64Array(resamples);
  const draw = new Float64Array(values.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < values.length; i++) draw[i] = values[Math.floor(rng() * values.length)]!;
    draw.sort();
    const mid = draw.length >> 1;
    medians[r] = draw.length % 2 ? draw[mid]! : (draw[mid - 1]! + draw[mid]!) / 2;
  }
  const sorted = Array.from(medians.sort());
  const alpha = (1 - level) / 2;
  return { estimate, low: quantileSorted(sorted, alpha), high: quantileSorted(sorted, 1 - alpha), level };
}
