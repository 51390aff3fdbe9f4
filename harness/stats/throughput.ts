// A trial's throughput and data stall from its steps. The trial (one process) is the unit that
// the intervals in log-ratio.ts and blocked.ts are built on.
import type { StepSample } from '../trial/record.js';

/** Samples per second as total samples over total step time: honest for bursty pipelines. */
export function ratioThroughput(steps: readonly StepSample[]): number | null {
  const seconds = steps.reduce((a, s) => a + s.seconds, 0);
  return seconds > 0 ? steps.reduce((a, s) => a + s.samples, 0) / seconds : null;
}

/** Share of step time spent waiting for data, or null when the workload does not report it. */
export function stallFraction(steps: readonly StepSample[]): number | null {
  if (steps.length === 0 || steps.some((s) => s.data_wait_seconds === undefined)) return null;
  const seconds = steps.reduce((a, s) => a + s.seconds, 0);
  return seconds > 0 ? steps.reduce((a, s) => a + s.data_wait_seconds!, 0) / seconds : null;
}
