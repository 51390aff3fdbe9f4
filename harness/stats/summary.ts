// Step latency percentiles (no I/O).
import { median, quantile } from 'simple-statistics';
import type { StepSample } from '../domain/index.js';

/** Median and 95th percentile of step seconds (linear interpolation between order statistics). */
export function stepLatency(steps: readonly StepSample[]): { median: number; p95: number } | null {
  if (steps.length === 0) return null;
  const seconds = steps.map((s) => s.seconds);
  return { median: median(seconds), p95: quantile(seconds, 0.95) };
}
