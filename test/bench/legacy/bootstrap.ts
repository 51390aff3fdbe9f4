// Frozen copy of harness/stats/bootstrap.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Percentile bootstrap confidence intervals of a median and of a ratio of medians
// (Efron & Tibshirani 1993, ch. 13), seeded so that the same data always gives the same interval.
import { median, quantileSorted } from 'simple-statistics';
import { createRng } from './rng.js';

/** Resamples per interval; at least 10,000 keeps the 2.5% tail stable to about a percent. */
export const BOOTSTRAP_RESAMPLES = 10_000;

export interface BootstrapOptions {
  seed?: number;
  resamples?: number;
  /** Confidence level, 0.95 unless given. */
  level?: number;
}

export interface Interval {
  estimate: number;
  low: number;
  high: number;
  level: number;
}

/** Median of a scratch buffer, sorting it in place. */
export function medianInPlace(values: Float64Array): number {
  values.sort();
  const mid = values.length >> 1;
  return values.length % 2 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}

/** The percentile interval of bootstrap statistics around `estimate`. */
export function percentileInterval(estimate: number, stats: Float64Array, level: number): Interval {
  const sorted = Array.from(stats.sort());
  const alpha = (1 - level) / 2;
  return { estimate, low: quantileSorted(sorted, alpha), high: quantileSorted(sorted, 1 - alpha), level };
}

/** Fills `into` with a resample (with replacement) of `values` and returns its median. */
function resampledMedian(values: readonly number[], into: Float64Array, rng: () => number): number {
  for (let i = 0; i < values.length; i++) into[i] = values[Math.floor(rng() * values.length)]!;
  return medianInPlace(into);
}

/** CI of the median of `values`. */
export function bootstrapMedian(values: readonly number[], opts: BootstrapOptions = {}): Interval | null {
  if (values.length === 0) return null;
  const level = opts.level ?? 0.95;
  const estimate = median([...values]);
  if (values.length === 1) return { estimate, low: estimate, high: estimate, level };
  const rng = createRng(opts.seed ?? 1);
  const stats = new Float64Array(opts.resamples ?? BOOTSTRAP_RESAMPLES);
  const draw = new Float64Array(values.length);
  for (let r = 0; r < stats.length; r++) stats[r] = resampledMedian(values, draw, rng);
  return percentileInterval(estimate, stats, level);
}

/** CI of median(b) / median(a), resampling each sample independently (e.g. peak memory per trial). */
export function bootstrapMedianRatio(
  a: readonly number[],
  b: readonly number[],
  opts: BootstrapOptions = {},
): Interval | null {
  if (a.length === 0 || b.length === 0) return null;
  const ma = median([...a]);
  if (ma <= 0) return null;
  const rng = createRng(opts.seed ?? 1);
  const stats = new Float64Array(opts.resamples ?? BOOTSTRAP_RESAMPLES);
  const da = new Float64Array(a.length);
  const db = new Float64Array(b.length);
  for (let r = 0; r < stats.length; r++) {
    const x = resampledMedian(a, da, rng);
    stats[r] = x > 0 ? resampledMedian(b, db, rng) / x : 0;
  }
  return percentileInterval(median([...b]) / ma, stats, opts.level ?? 0.95);
}
