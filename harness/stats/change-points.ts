// Step (change-point) detection in nightly benchmark history, in the spirit of asv's step_detect:
// an exact weighted L1 Potts fit of ln(value) (Friedrich et al. 2008, J. Comput. Graph. Stat. 17:201).
//
// Minimizes sum_i w_i |y_i - level(segment)| + penalty * #segments by dynamic programming over segment
// ends. Segment costs come from two Fenwick trees over the global ranks of y (weight, weight * y), so
// each costs O(log n) and the fit O(n^2 log n). A level needs MIN_LEVEL_NIGHTS nights unless it is
// the latest one, so a one- or two-night blip is an outlier, not a level change.

export interface SeriesPoint {
  value: number;
  /** Optional 95% CI of the value; a narrow CI makes the point count more. */
  low?: number | null;
  high?: number | null;
}

export interface ChangePoint {
  /** Index of the first point of the new level. */
  index: number;
  /** Level (weighted median of the segment) before and after, in the metric's units. */
  before: number;
  after: number;
  /** after / before. */
  ratio: number;
}

export interface Segment {
  /** [start, end) indices into the series. */
  start: number;
  end: number;
  /** Weighted median of the segment, in the metric's units. */
  level: number;
}

export interface StepFit {
  changePoints: ChangePoint[];
  /** Segments [start, end) with their level. */
  segments: Segment[];
  /** Robust noise scale of the log-values used for the penalty. */
  noise: number;
  penalty: number;
}

export interface StepOptions {
  /** Cost of one more segment, in weighted |ln| units. @default PENALTY_FACTOR * noise * ln(n) */
  penalty?: number;
  /** Steps with |ln(after / before)| below this are merged away. @default MIN_STEP_NOISES * noise */
  minRelativeStep?: number;
}

/**
 * Penalty per segment in noise units, times ln(n) (a BIC-like growth, Yao 1988). Chosen on 30 nights
 * of uniform +/-3% noise: lower factors mark steps in pure noise when the noise estimate comes out
 * low, higher ones miss 10% steps. test/unit/stats/change-points.test.ts pins both sides on 200 seeds.
 */
export const PENALTY_FACTOR = 5;
/** Default minimum step: steps smaller than one night's noise are not worth reporting. */
export const MIN_STEP_NOISES = 1;
/**
 * Nights a level needs, except the latest level (which may be a new one, still to be confirmed).
 * Two is not enough: a two-night segment's weighted median is its heavier point, so it would fit
 * a single outlier exactly whenever that outlier has the narrower CI.
 */
export const MIN_LEVEL_NIGHTS = 3;
/** 75th percentile of |Z| for standard normal Z; successive differences have sqrt(2) x sigma. */
const ABS_NORMAL_Q75 = 1.1503;
const NOISE_FLOOR = 1e-4;
/** A 95% CI spans 2 x 1.96 sigma. */
const CI95_SIGMAS = 3.92;
/** Keeps 1 / sigma finite for a zero-width CI (such points get the maximum weight). */
const MIN_SIGMA = 1e-12;
/** Weights relative to the median weight are clipped to [1/4, 4] so no point dominates. */
const MAX_WEIGHT_RATIO = 4;

/** Fits steps to `points` (one a night, oldest first). Throws RangeError on invalid input. */
export function detectChangePoints(points: readonly SeriesPoint[], opts: StepOptions = {}): StepFit {
  const y = points.map((p, i) => logValue(p, i));
  const w = weights(points);
  const noise = noiseScale(y);
  const penalty = resolveOption(opts.penalty, 'penalty', PENALTY_FACTOR * noise * Math.log(Math.max(points.length, 2)));
  const minStep = resolveOption(opts.minRelativeStep, 'minRelativeStep', MIN_STEP_NOISES * noise);
  const bounds = points.length >= 3 ? fitSegments(y, w, penalty) : points.length ? [0, points.length] : [0];
  const segments = mergeSmallSteps(
    bounds,
    y,
    w,
    minStep,
    points.map((p) => p.value),
  );
  return { changePoints: changePointsOf(segments), segments, noise, penalty };
}

function logValue(p: SeriesPoint, i: number): number {
  if (!Number.isFinite(p.value) || p.value <= 0) {
    throw new RangeError(
      `points[${i}].value must be a positive finite number (steps are fitted to ln(value)), got ${p.value}`,
    );
  }
  return Math.log(p.value);
}

function resolveOption(given: number | undefined, name: string, fallback: number): number {
  if (given === undefined) return fallback;
  if (!Number.isFinite(given) || given < 0)
    throw new RangeError(`Expected the \`${name}\` option to be a non-negative finite number, got ${given}`);
  return given;
}

/** 1 / sigma of each point's log-CI, relative to the median over points with a CI; 1 without a CI. */
function weights(points: readonly SeriesPoint[]): Float64Array {
  const raw = points.map((p, i) => logSigma(p, i));
  const known = raw.filter((s): s is number => s !== null).map((s) => 1 / s);
  const mid = known.length ? medianOf(known) : 1;
  const w = new Float64Array(points.length);
  raw.forEach((s, i) => {
    const rel = s === null ? 1 : 1 / s / mid;
    w[i] = Math.min(MAX_WEIGHT_RATIO, Math.max(1 / MAX_WEIGHT_RATIO, rel));
  });
  return w;
}

function logSigma(p: SeriesPoint, i: number): number | null {
  const { low, high } = p;
  if (low == null && high == null) return null;
  if (low == null || high == null)
    throw new RangeError(`points[${i}]: give both low and high of the CI or neither, got low ${low}, high ${high}`);
  if (!(Number.isFinite(low) && Number.isFinite(high) && low > 0 && low <= high)) {
    throw new RangeError(`points[${i}]: the CI must satisfy 0 < low <= high (finite), got low ${low}, high ${high}`);
  }
  return Math.max(MIN_SIGMA, (Math.log(high) - Math.log(low)) / CI95_SIGMAS);
}

/**
 * Robust sigma of y from successive differences, so steps and drift barely inflate it: the 75th
 * percentile of |d| ignores up to a quarter of them (each step or outlier spoils one or two) and
 * varies less than the MAD on short histories (about 17% vs 23% at 30 nights).
 */
function noiseScale(y: readonly number[]): number {
  if (y.length < 2) return NOISE_FLOOR;
  const d = y
    .slice(1)
    .map((v, i) => Math.abs(v - y[i]!))
    .sort((a, b) => a - b);
  const q75 = d[Math.floor(0.75 * (d.length - 1))]!;
  return Math.max(NOISE_FLOOR, q75 / (ABS_NORMAL_Q75 * Math.SQRT2));
}

function medianOf(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Exact DP; returns segment boundaries [0, ..., n]. */
function fitSegments(y: readonly number[], w: Float64Array, penalty: number): number[] {
  const n = y.length;
  const tree = new SegmentCosts(y, w);
  const best = new Float64Array(n + 1).fill(Infinity);
  const prev = new Int32Array(n + 1);
  best[0] = 0;
  for (let s = 0; s < n; s++) {
    const base = best[s]!;
    if (base === Infinity) continue;
    tree.reset();
    for (let e = s + 1; e <= n; e++) {
      tree.add(e - 1);
      // Short levels are barred unless they are the latest; the tree still needs their points.
      if (e - s < MIN_LEVEL_NIGHTS && e !== n) continue;
      const total = base + tree.cost() + penalty;
      if (total < best[e]!) {
        best[e] = total;
        prev[e] = s;
      }
    }
  }
  const bounds = [n];
  for (let e = n; e > 0; e = prev[e]!) bounds.push(prev[e]!);
  return bounds.reverse();
}

/** Weighted L1 cost of the points added since reset, about their weighted median, in O(log n). */
class SegmentCosts {
  private readonly n: number;
  private readonly top: number;
  private readonly rank: Int32Array;
  private readonly yByRank: Float64Array;
  private readonly w: Float64Array;
  private readonly yc: Float64Array;
  private readonly treeW: Float64Array;
  private readonly treeS: Float64Array;
  /** Weight at each rank in the current segment (0 when absent). */
  private readonly atRank: Float64Array;
  private totalW = 0;
  private totalS = 0;

  constructor(y: readonly number[], w: Float64Array) {
    const n = y.length;
    this.n = n;
    // Centering keeps weight * y sums small, so the cost subtraction loses little precision.
    const center = medianOf(y);
    this.yc = Float64Array.from(y, (v) => v - center);
    this.w = w;
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => y[a]! - y[b]! || a - b);
    this.rank = new Int32Array(n);
    this.yByRank = new Float64Array(n + 1);
    order.forEach((i, r) => {
      this.rank[i] = r + 1;
      this.yByRank[r + 1] = this.yc[i]!;
    });
    this.top = 2 ** Math.floor(Math.log2(Math.max(n, 1)));
    this.treeW = new Float64Array(n + 1);
    this.treeS = new Float64Array(n + 1);
    this.atRank = new Float64Array(n + 1);
  }

  reset(): void {
    this.treeW.fill(0);
    this.treeS.fill(0);
    this.atRank.fill(0);
    this.totalW = this.totalS = 0;
  }

  add(i: number): void {
    const wi = this.w[i]!;
    const si = wi * this.yc[i]!;
    const r = this.rank[i]!;
    this.atRank[r] = wi;
    this.totalW += wi;
    this.totalS += si;
    for (let k = r; k <= this.n; k += k & -k) {
      this.treeW[k]! += wi;
      this.treeS[k]! += si;
    }
  }

  /** Descends the weight tree to the weighted median rank, collecting prefix sums on the way. */
  cost(): number {
    const half = this.totalW / 2;
    let pos = 0;
    let accW = 0;
    let accS = 0;
    for (let step = this.top; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= this.n && accW + this.treeW[next]! < half) {
        pos = next;
        accW += this.treeW[next]!;
        accS += this.treeS[next]!;
      }
    }
    const r = pos + 1;
    const mu = this.yByRank[r]!;
    // If rounding lands on a rank outside the segment, mu still lies between the flanking members,
    // where the cost is flat (the weight below is about half), so the cost stays optimal.
    accW += this.atRank[r]!;
    accS += this.atRank[r]! * mu;
    return mu * accW - accS + (this.totalS - accS) - mu * (this.totalW - accW);
  }
}

/** Index of the weighted median of y[start, end), so levels are observed values, not exp(ln v). */
function weightedMedianIndex(y: readonly number[], w: Float64Array, start: number, end: number): number {
  const idx = Array.from({ length: end - start }, (_, k) => start + k).sort((a, b) => y[a]! - y[b]! || a - b);
  const half = idx.reduce((a, i) => a + w[i]!, 0) / 2;
  let acc = 0;
  for (const i of idx) {
    acc += w[i]!;
    if (acc >= half) return i;
  }
  return idx[idx.length - 1]!;
}

/** Repeatedly merges the smallest step below `minStep` and refits the merged level. */
function mergeSmallSteps(
  bounds: number[],
  y: readonly number[],
  w: Float64Array,
  minStep: number,
  values: readonly number[],
): Segment[] {
  const medians = bounds.slice(1).map((end, k) => weightedMedianIndex(y, w, bounds[k]!, end));
  const stepAt = (k: number) => Math.abs(y[medians[k]!]! - y[medians[k - 1]!]!);
  for (;;) {
    let smallest = -1;
    for (let k = 1; k < medians.length; k++) {
      if (stepAt(k) < minStep && (smallest < 0 || stepAt(k) < stepAt(smallest))) smallest = k;
    }
    if (smallest < 0) break;
    bounds.splice(smallest, 1);
    medians.splice(smallest - 1, 2, weightedMedianIndex(y, w, bounds[smallest - 1]!, bounds[smallest]!));
  }
  return medians.map((m, k) => ({ start: bounds[k]!, end: bounds[k + 1]!, level: values[m]! }));
}

function changePointsOf(segments: readonly Segment[]): ChangePoint[] {
  return segments.slice(1).map((seg, k) => {
    const before = segments[k]!.level;
    return { index: seg.start, before, after: seg.level, ratio: seg.level / before };
  });
}
