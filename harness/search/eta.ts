// What the rest of a max-batch search will take, in seconds, from what its trials have cost: short probes
// at their mean, and runs until memory flattens as a probe plus their extra steps at the step time measured
// nearest the max (a long run is mostly steps: on a loaded 2-core machine 50 of them took 7 minutes).
import type { ProbeResult } from './probe.js';

export interface RemainingRuns {
  /** Short probes still to come (and other trials of probe length: recommended, throughput). */
  short: number;
  /** Runs until memory flattens still to come: the confirmation, boundary repeats. */
  long: number;
}

export interface RunLengths {
  /** Steps of a short probe, warm-up included. */
  short: number;
  /** Steps a run until memory flattens takes at least, warm-up included (its minimum plus the plateau window). */
  long: number;
}

/** Seconds the remaining runs take by what the search's trials cost so far; undefined before any has a time. */
export function remainingSeconds(
  probes: readonly ProbeResult[],
  rest: RemainingRuns,
  steps: RunLengths,
): number | undefined {
  const timed = probes.filter((p) => typeof p.seconds === 'number');
  const shorts = timed.filter((p) => p.growth === undefined);
  const longs = timed.filter((p) => p.growth !== undefined && p.ok);
  if (shorts.length === 0 && longs.length === 0) return undefined;
  const mean = (xs: readonly ProbeResult[]) => xs.reduce((a, p) => a + p.seconds!, 0) / xs.length;
  // The step time of the largest batch that ran: the rest of the search runs near it.
  const ran = timed.filter((p) => p.ok && p.p50Seconds !== null).sort((a, b) => b.batch - a.batch);
  const step = ran[0]?.p50Seconds ?? 0;
  const tShort = shorts.length > 0 ? mean(shorts) : mean(longs) - Math.max(0, steps.long - steps.short) * step;
  const tLong = longs.length > 0 ? mean(longs) : tShort + Math.max(0, steps.long - steps.short) * step;
  return rest.short * Math.max(0, tShort) + rest.long * Math.max(0, tLong);
}

/** Margin of a run's timeout over the time its steps are expected to take. */
export const TIMEOUT_MARGIN = 1.5;

/**
 * The seconds a run of `steps` steps at `batch` takes, by the short probe nearest below it: its cost
 * outside its steps plus the steps at its step time, scaled to the batch. Undefined before such a probe.
 */
export function runSeconds(
  probes: readonly ProbeResult[],
  batch: number,
  steps: number,
  shortSteps: number,
): number | undefined {
  const below = probes
    .filter(
      (p) =>
        p.ok && p.growth === undefined && p.p50Seconds !== null && typeof p.seconds === 'number' && p.batch <= batch,
    )
    .sort((a, b) => b.batch - a.batch)[0];
  if (below === undefined) return undefined;
  const step = below.p50Seconds! * Math.max(1, batch / below.batch);
  const outside = Math.max(0, below.seconds! - shortSteps * below.p50Seconds!);
  return outside + steps * step;
}
