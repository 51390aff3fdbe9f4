// Intervals on the log scale, with the trial (one process) as the unit of variance: per-pair
// log-ratios of interleaved A B / B A pairs (a paired t interval: both trials of a pair share the
// machine's load at that moment, so it cancels), the log-mean of one config's per-trial values, and
// two independent groups (Welch). Estimates are geometric means: exp(mean of logs), the natural
// average of ratios (Fleming & Wallace 1986). Step-level noise is already inside each trial's
// value, so it is not counted a second time.
import { tQuantile, tTwoSidedP } from './student-t.js';
import type { LogInterval } from '../domain/index.js';

/** Fewer trials (or pairs) than this never get an interval: their spread says almost nothing. */
export const MIN_TRIALS_FOR_CI = 3;

function meanSd(x: readonly number[]): { mean: number; sd: number } {
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  const ss = x.reduce((a, b) => a + (b - mean) ** 2, 0);
  return { mean, sd: x.length > 1 ? Math.sqrt(ss / (x.length - 1)) : 0 };
}

function logs(values: readonly number[], what: string): number[] {
  return values.map((v, i) => {
    if (!(v > 0 && Number.isFinite(v)))
      throw new RangeError(`${what}[${i}] must be a positive finite number, got ${v}`);
    return Math.log(v);
  });
}

function interval(
  mean: number,
  se: number,
  df: number,
  alpha: number,
  n: number,
  method: LogInterval['method'],
  test: boolean,
): LogInterval {
  const level = 1 - alpha;
  if (se === 0) {
    // Identical in every pair or trial (deterministic memory, say): the interval is the value itself.
    const v = Math.exp(mean);
    return { estimate: v, low: v, high: v, level, p: test ? (mean === 0 ? 1 : 0) : null, n, df, se, method };
  }
  const q = tQuantile(1 - alpha / 2, df);
  return {
    estimate: Math.exp(mean),
    low: Math.exp(mean - q * se),
    high: Math.exp(mean + q * se),
    level,
    p: test ? tTwoSidedP(mean / se, df) : null,
    n,
    df,
    se,
    method,
  };
}

/**
 * The geometric-mean ratio over pairs with its (1 - alpha) interval: `ratios[i]` is pair i's
 * candidate / baseline. Null with fewer than MIN_TRIALS_FOR_CI pairs.
 */
export function pairedRatioInterval(ratios: readonly number[], alpha: number): LogInterval | null {
  if (ratios.length < MIN_TRIALS_FOR_CI) return null;
  const { mean, sd } = meanSd(logs(ratios, 'ratios'));
  return interval(mean, sd / Math.sqrt(ratios.length), ratios.length - 1, alpha, ratios.length, 'paired-t', true);
}

/**
 * The geometric mean of one config's per-trial values with its interval; null with fewer than
 * MIN_TRIALS_FOR_CI trials.
 */
export function logMeanInterval(values: readonly number[], alpha: number): LogInterval | null {
  if (values.length < MIN_TRIALS_FOR_CI) return null;
  const { mean, sd } = meanSd(logs(values, 'values'));
  return interval(mean, sd / Math.sqrt(values.length), values.length - 1, alpha, values.length, 'log-t', false);
}

/**
 * The geometric mean of a few trials with a between-trial spread pooled from other configs of the
 * same stage (`sdLog` on the log scale with `df` degrees of freedom): how a config with one or two
 * trials gets an honest interval. Null without trials or without pooled degrees of freedom.
 */
export function pooledLogMeanInterval(
  values: readonly number[],
  sdLog: number,
  df: number,
  alpha: number,
): LogInterval | null {
  if (values.length === 0 || !(df >= 1)) return null;
  const { mean } = meanSd(logs(values, 'values'));
  return interval(mean, sdLog / Math.sqrt(values.length), df, alpha, values.length, 'pooled-log-t', false);
}

/**
 * Ratio of geometric means of two independent groups (after / before) with Welch's interval
 * (Satterthwaite degrees of freedom). Null when either group has fewer than MIN_TRIALS_FOR_CI values.
 */
export function welchRatioInterval(
  before: readonly number[],
  after: readonly number[],
  alpha: number,
): LogInterval | null {
  if (before.length < MIN_TRIALS_FOR_CI || after.length < MIN_TRIALS_FOR_CI) return null;
  const a = meanSd(logs(before, 'before'));
  const b = meanSd(logs(after, 'after'));
  const va = a.sd ** 2 / before.length;
  const vb = b.sd ** 2 / after.length;
  const se = Math.sqrt(va + vb);
  const df =
    se === 0
      ? before.length + after.length - 2
      : (va + vb) ** 2 / (va ** 2 / (before.length - 1) + vb ** 2 / (after.length - 1));
  return interval(b.mean - a.mean, se, df, alpha, Math.min(before.length, after.length), 'welch-log-t', true);
}
