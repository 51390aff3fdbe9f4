// Summaries of per-step samples: throughput and latency percentiles (no I/O).
import { median, quantile } from 'simple-statistics';
import type { StepSample } from '../trial/record.js';

/** Median of per-step samples/s; robust to a slow step, unlike total samples over total time. */
export function medianThroughput(steps: readonly StepSample[]): number | null {
  const rates = steps.filter((s) => s.seconds > 0).map((s) => s.samples / s.seconds);
  return rates.length > 0 ? median(rates) : null;
}

/** Median and 95th percentile of step seconds (linear interpolation between order statistics). */
export function stepLatency(steps: readonly StepSample[]): { median: number; p95: number } | null {
  if (steps.length === 0) return null;
  const seconds = steps.map((s) => s.seconds);
  return { median: median(seconds), p95: quantile(seconds, 0.95) };
}
