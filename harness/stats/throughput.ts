// Throughput of a configuration across its trials, with a hierarchical bootstrap CI:
// resample trials (processes), then blocks of steps within each (Davison & Hinkley 1997, 3.8 and 8.2).
import { quantileSorted } from 'simple-statistics';
import type { StepSample } from '../trial/record.js';
import { BOOTSTRAP_RESAMPLES, type Interval } from './bootstrap.js';
import { createRng } from './rng.js';

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

/** CI of the ratio throughput over trials of one config; seeded, so the same journal gives the same CI. */
export function throughputInterval(trials: readonly (readonly StepSample[])[], opts: { seed?: number; resamples?: number; level?: number } = {}): Interval | null {
  const usable = trials.filter((t) => t.length > 0);
  const all = usable.flat();
  const estimate = ratioThroughput(all);
  if (estimate === null) return null;
  const level = opts.level ?? 0.95;
  const rng = createRng(opts.seed ?? 1);
  const resamples = opts.resamples ?? BOOTSTRAP_RESAMPLES;
  const stats = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) stats[r] = resampleRatio(usable, rng);
  const sorted = Array.from(stats.sort());
  const alpha = (1 - level) / 2;
  return { estimate, low: quantileSorted(sorted, alpha), high: quantileSorted(sorted, 1 - alpha), level };
}

/**
 * One hierarchical resample of a config's trials: trials with replacement, then, within each, a
 * moving-block bootstrap of its steps (Kunsch 1989) with blocks of about sqrt(n) steps, because
 * steps are not independent: a prefetching pipeline alternates fast steps with waits.
 */
function resampleRatio(trials: readonly (readonly StepSample[])[], rng: () => number): number {
  let samples = 0;
  let seconds = 0;
  for (let t = 0; t < trials.length; t++) {
    const trial = trials[Math.floor(rng() * trials.length)]!;
    const n = trial.length;
    const block = Math.max(1, Math.round(Math.sqrt(n)));
    for (let taken = 0; taken < n; ) {
      const start = Math.floor(rng() * (n - block + 1));
      for (let k = 0; k < block && taken < n; k++, taken++) {
        const s = trial[start + k]!;
        samples += s.samples;
        seconds += s.seconds;
      }
    }
  }
  return seconds > 0 ? samples / seconds : 0;
}

/** CI of throughput(b) / throughput(a), resampling both configs independently and hierarchically. */
export function ratioInterval(
  a: readonly (readonly StepSample[])[],
  b: readonly (readonly StepSample[])[],
  opts: { seed?: number; resamples?: number; level?: number } = {},
): Interval | null {
  const ta = a.filter((t) => t.length > 0);
  const tb = b.filter((t) => t.length > 0);
  const ea = ratioThroughput(ta.flat());
  const eb = ratioThroughput(tb.flat());
  if (ea === null || eb === null || ea === 0) return null;
  const rng = createRng(opts.seed ?? 1);
  const resamples = opts.resamples ?? BOOTSTRAP_RESAMPLES;
  const stats = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    const x = resampleRatio(ta, rng);
    stats[r] = x > 0 ? resampleRatio(tb, rng) / x : 0;
  }
  const sorted = Array.from(stats.sort());
  const level = opts.level ?? 0.95;
  const alpha = (1 - level) / 2;
  return { estimate: eb / ea, low: quantileSorted(sorted, alpha), high: quantileSorted(sorted, 1 - alpha), level };
}
