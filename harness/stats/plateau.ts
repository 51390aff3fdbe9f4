// Has memory stopped growing? A trial's per-step memory judged as a running peak: after the first
// optimizer step and an epoch boundary, a window of readings with no new peak beyond a tolerance.
// A cap is hit by a peak, so new peaks decide, not averages. The window is a patience rule, as in early
// stopping (Prechelt, "Early Stopping - But When?", 1998): stop after `window` readings without a new best.
import type { MemoryGrowth, MemorySource, PlateauRule } from '../domain/index.js';

export interface MemoryPoint {
  /** 0-based step of the trial, warm-up included. */
  step: number;
  bytes: number;
  /** The step's epoch, when the workload reports epochs. */
  epoch?: number;
}

/** A rise of at most this many bytes is never a new peak: allocator rounding and interpreter noise. */
export const PLATEAU_FLOOR_BYTES = 2 ** 20;
/**
 * The window starts at this step or later (0-based): a step's memory is read when it ends, so by
 * step 1 the first optimizer update (AdamW's state appears there) is behind it.
 */
export const FIRST_UPDATE_STEP = 1;

/** Whether `after` is a new peak over `before` beyond the tolerance (a fraction of `before`, at least the floor). */
export function isNewPeak(before: number, after: number, tolerance: number): boolean {
  return after - before > Math.max(tolerance * before, PLATEAU_FLOOR_BYTES);
}

/** The running maximum of the readings. */
export function runningPeaks(points: readonly MemoryPoint[]): number[] {
  let peak = -Infinity;
  return points.map((p) => (peak = Math.max(peak, p.bytes)));
}

/**
 * The step of the first epoch boundary (the first step of a later epoch than the first reading's):
 * 0 when no reading carries an epoch (nothing to wait for), null when epochs are reported and none was crossed.
 */
export function boundaryStep(points: readonly MemoryPoint[]): number | null {
  const first = points.find((p) => p.epoch !== undefined)?.epoch;
  if (first === undefined) return 0;
  return points.find((p) => p.epoch !== undefined && p.epoch > first)?.step ?? null;
}

/**
 * The step at which the series has flattened under `rule`, or undefined: the first reading j with at
 * least `min_steps` steps behind it whose window (the `window` readings before it, starting at or after
 * the first update and the first epoch boundary) brought no new peak.
 */
export function plateauStep(points: readonly MemoryPoint[], rule: PlateauRule): number | undefined {
  const boundary = boundaryStep(points);
  if (boundary === null) return undefined;
  const peaks = runningPeaks(points);
  for (let j = rule.window; j < points.length; j++) {
    const ref = j - rule.window;
    const from = points[ref]!.step;
    if (points[j]!.step + 1 < rule.min_steps || from < FIRST_UPDATE_STEP || from < boundary) continue;
    if (!isNewPeak(peaks[ref]!, peaks[j]!, rule.tolerance)) return points[j]!.step;
  }
  return undefined;
}

export interface RunEnd {
  /** Steps the run reported (warm-up included). */
  steps: number;
  /** Steps it was given: reaching them is reaching the bound. */
  bound: number;
  /** Where the readings came from; null when there were none. */
  source: MemorySource | null;
}

/** The verdict on a finished run's series: plateau, still growing (and how fast), or unproven (and why). */
export function judgeGrowth(points: readonly MemoryPoint[], rule: PlateauRule, run: RunEnd): MemoryGrowth {
  if (points.length === 0 || run.source === null) return { verdict: 'unproven', missing: 'memory', steps: run.steps };
  const source = run.source;
  const peaks = runningPeaks(points);
  const at = plateauStep(points, rule);
  if (at !== undefined) {
    const i = points.findIndex((p) => p.step === at);
    return { verdict: 'plateau', at_step: at, peak_bytes: peaks[i]!, source };
  }
  const last = points.length - 1;
  const ref = Math.max(0, last - rule.window);
  if (isNewPeak(peaks[ref]!, peaks[last]!, rule.tolerance)) {
    const span = Math.max(1, points[last]!.step - points[ref]!.step);
    return {
      verdict: 'growing',
      bytes_per_step: (peaks[last]! - peaks[ref]!) / span,
      at_step: points[last]!.step,
      at_bound: run.steps >= run.bound,
      peak_bytes: peaks[last]!,
      source,
    };
  }
  const missing = boundaryStep(points) === null ? 'epoch-boundary' : 'window';
  return { verdict: 'unproven', missing, steps: run.steps };
}
