// Frozen copy of harness/stats/throughput.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Throughput of a configuration across its trials, with hierarchical bootstrap CIs: resample
// trials (processes), then blocks of steps within each (Davison & Hinkley 1997, 3.8 and 8.2).
// Pooled throughput (all samples over all step time) ranks sweeps; the median over trials of each
// trial's throughput, and ratios of such medians, compare arms.
import type { StepSample } from './types.js';
import {
  BOOTSTRAP_RESAMPLES,
  medianInPlace,
  percentileInterval,
  type BootstrapOptions,
  type Interval,
} from './bootstrap.js';
import { createRng } from './rng.js';
import { ratioThroughput, stallFraction } from '../../../harness/stats/throughput.js';

export { ratioThroughput, stallFraction };

/** CI of the ratio throughput over trials of one config; seeded, so the same journal gives the same CI. */
export function throughputInterval(
  trials: readonly (readonly StepSample[])[],
  opts: BootstrapOptions = {},
): Interval | null {
  const usable = trials.filter((t) => t.length > 0);
  const all = usable.flat();
  const estimate = ratioThroughput(all);
  if (estimate === null) return null;
  const rng = createRng(opts.seed ?? 1);
  const stats = new Float64Array(opts.resamples ?? BOOTSTRAP_RESAMPLES);
  for (let r = 0; r < stats.length; r++) stats[r] = resampleRatio(usable, rng);
  return percentileInterval(estimate, stats, opts.level ?? 0.95);
}

/**
 * One resample of a trial's steps: a moving-block bootstrap (Kunsch 1989) with blocks of about
 * sqrt(n) steps, because steps are not independent: a prefetching pipeline alternates fast steps
 * with waits. Returns the resampled totals.
 */
function resampleSteps(trial: readonly StepSample[], rng: () => number): { samples: number; seconds: number } {
  let samples = 0;
  let seconds = 0;
  const n = trial.length;
  const block = Math.max(1, Math.round(Math.sqrt(n)));
  for (let taken = 0; taken < n;) {
    const start = Math.floor(rng() * (n - block + 1));
    for (let k = 0; k < block && taken < n; k++, taken++) {
      const s = trial[start + k]!;
      samples += s.samples;
      seconds += s.seconds;
    }
  }
  return { samples, seconds };
}

/** One hierarchical resample of a config's trials: trials with replacement, then steps within each. */
function resampleRatio(trials: readonly (readonly StepSample[])[], rng: () => number): number {
  let samples = 0;
  let seconds = 0;
  for (let t = 0; t < trials.length; t++) {
    const r = resampleSteps(trials[Math.floor(rng() * trials.length)]!, rng);
    samples += r.samples;
    seconds += r.seconds;
  }
  return seconds > 0 ? samples / seconds : 0;
}

/** One hierarchical resample of the median of per-trial throughputs. */
function resampleMedianRate(
  trials: readonly (readonly StepSample[])[],
  rng: () => number,
  scratch: Float64Array,
): number {
  for (let t = 0; t < trials.length; t++) {
    const r = resampleSteps(trials[Math.floor(rng() * trials.length)]!, rng);
    scratch[t] = r.seconds > 0 ? r.samples / r.seconds : 0;
  }
  return medianInPlace(scratch.subarray(0, trials.length));
}

/** Throughput of each trial (total samples over total step time); trials without steps are left out. */
export function trialRates(trials: readonly (readonly StepSample[])[]): number[] {
  return trials.map((t) => ratioThroughput(t)).filter((r): r is number => r !== null);
}

/**
 * CI of the median over trials of each trial's throughput: the trials (processes) are resampled,
 * then the steps within each, so that variance between processes counts in full.
 */
export function medianRateInterval(
  trials: readonly (readonly StepSample[])[],
  opts: BootstrapOptions = {},
): Interval | null {
  const usable = trials.filter((t) => t.length > 0);
  if (usable.length === 0) return null;
  const estimate = medianInPlace(Float64Array.from(trialRates(usable)));
  const rng = createRng(opts.seed ?? 1);
  const stats = new Float64Array(opts.resamples ?? BOOTSTRAP_RESAMPLES);
  const scratch = new Float64Array(usable.length);
  for (let r = 0; r < stats.length; r++) stats[r] = resampleMedianRate(usable, rng, scratch);
  return percentileInterval(estimate, stats, opts.level ?? 0.95);
}

/** CI of median throughput(b) / median throughput(a), each resampled hierarchically and independently. */
export function medianRateRatioInterval(
  a: readonly (readonly StepSample[])[],
  b: readonly (readonly StepSample[])[],
  opts: BootstrapOptions = {},
): Interval | null {
  const median = (trials: readonly (readonly StepSample[])[]) => medianInPlace(Float64Array.from(trialRates(trials)));
  const scratch = new Map<readonly unknown[], Float64Array>();
  const resample = (trials: readonly (readonly StepSample[])[], rng: () => number) => {
    const buffer = scratch.get(trials) ?? new Float64Array(trials.length);
    scratch.set(trials, buffer);
    return resampleMedianRate(trials, rng, buffer);
  };
  return pairedRatioInterval(a, b, median, resample, opts);
}

/** CI of throughput(b) / throughput(a), resampling both configs independently and hierarchically. */
export function ratioInterval(
  a: readonly (readonly StepSample[])[],
  b: readonly (readonly StepSample[])[],
  opts: BootstrapOptions = {},
): Interval | null {
  return pairedRatioInterval(a, b, (trials) => ratioThroughput(trials.flat()), resampleRatio, opts);
}

/**
 * The bootstrap of statistic(b) / statistic(a) over the trials that have steps: each resample draws
 * both sides independently with `resample`; null when either side has nothing to measure.
 */
function pairedRatioInterval(
  a: readonly (readonly StepSample[])[],
  b: readonly (readonly StepSample[])[],
  statistic: (trials: readonly (readonly StepSample[])[]) => number | null,
  resample: (trials: readonly (readonly StepSample[])[], rng: () => number) => number,
  opts: BootstrapOptions,
): Interval | null {
  const ta = a.filter((t) => t.length > 0);
  const tb = b.filter((t) => t.length > 0);
  if (ta.length === 0 || tb.length === 0) return null;
  const ea = statistic(ta);
  const eb = statistic(tb);
  if (ea === null || eb === null || ea <= 0) return null;
  const rng = createRng(opts.seed ?? 1);
  const stats = new Float64Array(opts.resamples ?? BOOTSTRAP_RESAMPLES);
  for (let r = 0; r < stats.length; r++) {
    const x = resample(ta, rng);
    stats[r] = x > 0 ? resample(tb, rng) / x : 0;
  }
  return percentileInterval(eb / ea, stats, opts.level ?? 0.95);
}
