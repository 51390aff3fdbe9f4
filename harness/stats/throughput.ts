// A trial's throughput and data stall from its steps. The trial (one process) is the unit that
// the intervals in log-ratio.ts and blocked.ts are built on.
import type { StepSample } from '../domain/index.js';

/**
 * Samples per second as total samples over total step time: honest for bursty pipelines. Null when
 * no step was timed, and when the steps hold values that give no finite rate (the protocol rejects
 * those, but a journal is read as written).
 */
export function ratioThroughput(steps: readonly StepSample[]): number | null {
  const seconds = steps.reduce((a, s) => a + s.seconds, 0);
  const samples = steps.reduce((a, s) => a + s.samples, 0);
  return finiteOrNull(Number.isFinite(seconds) && seconds > 0 && samples >= 0 ? samples / seconds : null);
}

/** Share of step time spent waiting for data, or null when the workload does not report it. */
export function stallFraction(steps: readonly StepSample[]): number | null {
  if (steps.length === 0 || steps.some((s) => s.data_wait_seconds === undefined)) return null;
  const seconds = steps.reduce((a, s) => a + s.seconds, 0);
  const wait = steps.reduce((a, s) => a + s.data_wait_seconds!, 0);
  const fraction = finiteOrNull(Number.isFinite(seconds) && seconds > 0 && wait >= 0 ? wait / seconds : null);
  // A wait is part of its step: more than all of the time is no measurement.
  return fraction !== null && fraction <= 1 + 1e-9 ? Math.min(fraction, 1) : null;
}

function finiteOrNull(v: number | null): number | null {
  return v !== null && Number.isFinite(v) ? v : null;
}
