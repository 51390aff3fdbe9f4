// Fits peak memory against batch size and predicts where it meets the cap (least squares and secant).
import type { LinearFit } from '../domain/index.js';

export interface Reading {
  batch: number;
  bytes: number;
}

/** Ordinary least squares through the readings; undefined with fewer than two distinct batches. */
export function fitLinear(readings: readonly Reading[]): LinearFit | undefined {
  const n = readings.length;
  if (n < 2) return undefined;
  const mx = readings.reduce((s, r) => s + r.batch, 0) / n;
  const my = readings.reduce((s, r) => s + r.bytes, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const r of readings) {
    sxx += (r.batch - mx) ** 2;
    sxy += (r.batch - mx) * (r.bytes - my);
  }
  if (sxx === 0) return undefined;
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  const span = Math.max(...readings.map((r) => r.bytes)) - Math.min(...readings.map((r) => r.bytes));
  const worst = Math.max(...readings.map((r) => Math.abs(r.bytes - (intercept + slope * r.batch))));
  const ssr = readings.reduce((acc, r) => acc + (r.bytes - (intercept + slope * r.batch)) ** 2, 0);
  const sigma = n > 2 ? Math.sqrt(ssr / (n - 2)) : 0;
  return { intercept, slope, relativeResidual: span > 0 ? worst / span : worst > 0 ? Infinity : 0, sigma };
}

/** Readings scatter around the line by more than this fraction of their span: treat them as noisy. */
const NOISY_RESIDUAL = 0.01;

/** How many of the largest readings the prediction fits. */
const LOCAL_READINGS = 4;

export interface Prediction {
  /** Batch at which memory is predicted to reach the cap. */
  batch: number;
  /** Uncertainty of that batch (two residual standard errors over the slope), in samples. */
  spread: number;
}

/**
 * Predicts where memory meets `cap`. Clean readings use the secant through the two largest
 * readings (it follows curvature); noisy ones use the least-squares line, with a spread from its
 * residuals so the caller can bracket the prediction instead of trusting it to one step.
 */
export function predictWithSpread(all: readonly Reading[], cap: number): Prediction | undefined {
  // Only the readings nearest the limit: a curve is close to its local line or parabola there.
  const readings = [...all].sort((a, b) => a.batch - b.batch).slice(-LOCAL_READINGS);
  const fit = fitLinear(readings);
  const quad = readings.length >= 4 ? fitQuadratic(readings) : undefined;
  if (fit && fit.relativeResidual > NOISY_RESIDUAL && quad && quad.relativeResidual <= NOISY_RESIDUAL) {
    // Smooth curvature, not noise: solve the parabola for the cap.
    const root = quadraticRoot(quad, cap);
    if (root !== undefined) return { batch: root, spread: 0 };
  }
  if (fit && readings.length >= 3 && fit.relativeResidual > NOISY_RESIDUAL && fit.slope > 0) {
    const batch = (cap - fit.intercept) / fit.slope;
    // Standard error of the fitted line at the prediction, not of one reading: n readings narrow it.
    const n = readings.length;
    const mean = readings.reduce((acc, r) => acc + r.batch, 0) / n;
    const sxx = readings.reduce((acc, r) => acc + (r.batch - mean) ** 2, 0);
    const se = fit.sigma * Math.sqrt(1 / n + (batch - mean) ** 2 / sxx);
    return { batch, spread: (2 * se) / fit.slope };
  }
  const batch = predictLimit(readings, cap);
  return batch === undefined ? undefined : { batch, spread: 0 };
}

/**
 * Predicts the batch at which memory reaches `cap`, extrapolating from the ok reading nearest the
 * boundary with the local (secant) slope of the two largest readings.
 */
export function predictLimit(readings: readonly Reading[], cap: number): number | undefined {
  const sorted = [...readings].sort((a, b) => a.batch - b.batch);
  const top = sorted[sorted.length - 1];
  const below = sorted[sorted.length - 2];
  if (!top || !below) return undefined;
  let slope = (top.bytes - below.bytes) / (top.batch - below.batch);
  // Flat between the top two (an allocator step): the chord from the smallest reading still rises.
  if (!(slope > 0)) slope = (top.bytes - sorted[0]!.bytes) / (top.batch - sorted[0]!.batch);
  if (!(slope > 0) || !Number.isFinite(slope)) return undefined;
  return top.batch + (cap - top.bytes) / slope;
}

/** Fraction of the room between the smallest reading and the cap that the largest reading has used. */
export function headroomUsed(readings: readonly Reading[], cap: number): number {
  if (readings.length < 2) return 0;
  const bytes = readings.map((r) => r.bytes);
  const low = Math.min(...bytes);
  const room = cap - low;
  return room > 0 ? (Math.max(...bytes) - low) / room : 1;
}

/** Largest batch whose interpolated memory stays at or below `target`, from monotone readings. */
export function batchForMemory(readings: readonly Reading[], target: number): number | undefined {
  const sorted = [...readings].sort((a, b) => a.batch - b.batch);
  let best: number | undefined;
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i]!;
    if (r.bytes <= target) best = r.batch;
    const next = sorted[i + 1];
    if (next && r.bytes <= target && next.bytes > target && next.bytes > r.bytes) {
      return r.batch + ((target - r.bytes) / (next.bytes - r.bytes)) * (next.batch - r.batch);
    }
  }
  return best;
}

export interface QuadraticFit {
  /** Coefficients of bytes = c0 + c1 x + c2 x^2 with x = batch / scale. */
  coef: [number, number, number];
  scale: number;
  /** Largest residual relative to the readings' span: small means smooth curvature, not noise. */
  relativeResidual: number;
}

/** The smallest batch above the readings where the parabola reaches `cap`, if it rises there. */
function quadraticRoot(q: QuadraticFit, cap: number): number | undefined {
  const [c0, c1, c2] = q.coef;
  if (Math.abs(c2) < 1e-9 * Math.abs(c1)) return c1 > 0 ? ((cap - c0) / c1) * q.scale : undefined;
  const disc = c1 * c1 - 4 * c2 * (c0 - cap);
  if (disc < 0) return undefined;
  const roots = [(-c1 + Math.sqrt(disc)) / (2 * c2), (-c1 - Math.sqrt(disc)) / (2 * c2)].filter(
    (x) => x > 0 && c1 + 2 * c2 * x > 0,
  );
  return roots.length > 0 ? Math.min(...roots) * q.scale : undefined;
}

/** Least-squares parabola through the readings (four or more). */
export function fitQuadratic(readings: readonly Reading[]): QuadraticFit | undefined {
  if (readings.length < 4) return undefined;
  // Scale batch to [0, 1] so the normal equations stay well conditioned.
  const top = Math.max(...readings.map((r) => r.batch));
  const xs = readings.map((r) => r.batch / top);
  const ys = readings.map((r) => r.bytes);
  const sum = (f: (x: number, y: number) => number): number => xs.reduce((acc, x, i) => acc + f(x, ys[i]!), 0);
  const n = xs.length;
  const [s1, s2, s3, s4] = [sum((x) => x), sum((x) => x * x), sum((x) => x ** 3), sum((x) => x ** 4)];
  const [t0, t1, t2] = [sum((_, y) => y), sum((x, y) => x * y), sum((x, y) => x * x * y)];
  const coef = solve3(
    [
      [n, s1, s2],
      [s1, s2, s3],
      [s2, s3, s4],
    ],
    [t0, t1, t2],
  );
  if (!coef) return undefined;
  const span = Math.max(...ys) - Math.min(...ys);
  if (!(span > 0)) return undefined;
  const worst = Math.max(...xs.map((x, i) => Math.abs(ys[i]! - (coef[0] + coef[1] * x + coef[2] * x * x))));
  return { coef, scale: top, relativeResidual: worst / span };
}

function solve3(a: number[][], b: number[]): [number, number, number] | undefined {
  const det = (m: number[][]): number =>
    m[0]![0]! * (m[1]![1]! * m[2]![2]! - m[1]![2]! * m[2]![1]!) -
    m[0]![1]! * (m[1]![0]! * m[2]![2]! - m[1]![2]! * m[2]![0]!) +
    m[0]![2]! * (m[1]![0]! * m[2]![1]! - m[1]![1]! * m[2]![0]!);
  const d = det(a);
  if (Math.abs(d) < 1e-12) return undefined;
  const col = (i: number): number[][] => a.map((row, r) => row.map((v, c) => (c === i ? b[r]! : v)));
  return [det(col(0)) / d, det(col(1)) / d, det(col(2)) / d];
}
