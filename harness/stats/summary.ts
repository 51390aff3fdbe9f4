// Step latency percentiles (no I/O).
import { median, quantile } from 'simple-statistics';
import type { Interval, StepSample } from '../domain/index.js';

/** Median and 95th percentile of step seconds (linear interpolation between order statistics). */
export function stepLatency(steps: readonly StepSample[]): { median: number; p95: number } | null {
  if (steps.length === 0) return null;
  const seconds = steps.map((s) => s.seconds);
  return { median: median(seconds), p95: quantile(seconds, 0.95) };
}

/**
 * A distribution-free CI for the median: the order statistics x(k) and x(n+1-k), with k the largest
 * for which P(Bin(n, 1/2) < k) <= alpha/2, so the coverage is at least 1 - alpha for any continuous
 * distribution (exactly the binomial's, so usually above). `level` is that achieved coverage.
 * Null below the smallest n that reaches 1 - alpha (6 for 95%): no interval is better than a false one.
 */
export function medianInterval(values: readonly number[], alpha = 0.05): Interval | null {
  const n = values.length;
  if (n === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  // cdf[j] = P(Bin(n, 1/2) <= j), from exact binomial terms on the log scale (n may be large).
  let logTerm = -n * Math.LN2; // log C(n, 0) / 2^n
  let below = 0; // P(Bin < k)
  let k = 0;
  for (let j = 0; j < n; j++) {
    const next = below + Math.exp(logTerm);
    if (next > alpha / 2) break;
    below = next;
    k = j + 1;
    logTerm += Math.log((n - j) / (j + 1));
  }
  if (k < 1) return null;
  return { estimate: median(sorted), low: sorted[k - 1]!, high: sorted[n - k]!, level: 1 - 2 * below };
}
