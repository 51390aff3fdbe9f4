// One memory model across sequence-length buckets: peak bytes = a + b*batch*len + c*batch*len^2, with a
// shared fixed part (weights, runtime) and a per-sample part that grows with length (linear terms, and
// attention's quadratic one). It predicts where each bucket meets the cap, so a bucket's search starts
// next to its answer instead of exploring from scratch.
import { fitLinear, type Prediction, type Reading } from './memory-fit.js';

export interface LengthReading {
  batch: number;
  length: number;
  bytes: number;
}

export interface LengthModel {
  /** Fixed bytes: what a batch of zero would hold. */
  a: number;
  /** Bytes per token (batch x length). */
  b: number;
  /** Bytes per batch x length^2 (attention scores and the like). */
  c: number;
  /** Residual standard error in bytes (0 when the readings leave no degrees of freedom). */
  sigma: number;
  /** Distinct lengths the readings span: with one, b and c cannot be told apart. */
  lengths: number;
}

/** Bytes per sample at `length`. */
export function perSample(model: LengthModel, length: number): number {
  return model.b * length + model.c * length * length;
}

/**
 * Least squares of bytes on [1, batch*len, batch*len^2] with b and c kept non-negative (a negative
 * term is dropped and the rest refitted). Undefined with readings at fewer than two lengths, or too few.
 */
export function fitLengthModel(readings: readonly LengthReading[]): LengthModel | undefined {
  const lengths = new Set(readings.map((r) => r.length)).size;
  if (lengths < 2 || readings.length < 3) return undefined;
  const scaleL = Math.max(...readings.map((r) => r.length));
  const scaleB = Math.max(...readings.map((r) => r.batch));
  // Features scaled to about [0, 1] keep the normal equations well conditioned.
  const rows = readings.map((r) => {
    const x = (r.batch / scaleB) * (r.length / scaleL);
    return { x1: x, x2: x * (r.length / scaleL), y: r.bytes };
  });
  const unscale = (a: number, b1: number, c1: number) => ({
    a,
    b: b1 / (scaleB * scaleL),
    c: c1 / (scaleB * scaleL * scaleL),
  });
  const full = leastSquares(rows, [true, true]);
  let coef = full && full[1] >= 0 && full[2] >= 0 ? full : undefined;
  if (!coef) {
    const onlyLinear = leastSquares(rows, [true, false]);
    const onlyQuad = leastSquares(rows, [false, true]);
    const ok = [onlyLinear, onlyQuad].filter((c): c is [number, number, number] => !!c && c[1] >= 0 && c[2] >= 0);
    coef = ok.sort((p, q) => sse(rows, p) - sse(rows, q))[0];
  }
  if (!coef) return undefined;
  const free = readings.length - 1 - (coef[1] !== 0 ? 1 : 0) - (coef[2] !== 0 ? 1 : 0);
  const sigma = free > 0 ? Math.sqrt(sse(rows, coef) / free) : 0;
  return { ...unscale(coef[0], coef[1], coef[2]), sigma, lengths };
}

type Row = { x1: number; x2: number; y: number };

function sse(rows: readonly Row[], [a, b, c]: readonly number[]): number {
  return rows.reduce((acc, r) => acc + (r.y - (a! + b! * r.x1 + c! * r.x2)) ** 2, 0);
}

/** Least squares with the chosen columns (x1, x2) and an intercept; a left-out column gets 0. */
function leastSquares(rows: readonly Row[], use: [boolean, boolean]): [number, number, number] | undefined {
  const cols: ((r: Row) => number)[] = [() => 1];
  if (use[0]) cols.push((r) => r.x1);
  if (use[1]) cols.push((r) => r.x2);
  const k = cols.length;
  const ata = Array.from({ length: k }, (_, i) =>
    Array.from({ length: k }, (_, j) => rows.reduce((s, r) => s + cols[i]!(r) * cols[j]!(r), 0)),
  );
  const aty = Array.from({ length: k }, (_, i) => rows.reduce((s, r) => s + cols[i]!(r) * r.y, 0));
  const x = solve(ata, aty);
  if (!x) return undefined;
  // The solution lists the intercept, then the columns in use, in order.
  const rest = x.slice(1);
  return [x[0]!, use[0] ? rest.shift()! : 0, use[1] ? rest.shift()! : 0];
}

/** Gaussian elimination with partial pivoting; undefined for a singular system. */
function solve(a: number[][], b: number[]): number[] | undefined {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    const scale = Math.max(...m.map((row) => Math.abs(row[col]!)));
    if (Math.abs(m[pivot]![col]!) <= 1e-12 * Math.max(scale, 1e-300)) return undefined;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / m[col]![col]!;
      for (let c = col; c <= n; c++) m[r]![c]! -= f * m[col]![c]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

/**
 * Where a bucket of `length` meets `cap`: from the joint model when the readings span two lengths or
 * more; from one other length alone, the per-sample bytes there scaled between linearly and
 * quadratically in length (the model's two terms), which brackets the answer; undefined without readings.
 */
export function predictBucket(readings: readonly LengthReading[], length: number, cap: number): Prediction | undefined {
  const model = fitLengthModel(readings);
  if (model) {
    const s = perSample(model, length);
    if (!(s > 0) || !(cap > model.a)) return undefined;
    const batch = (cap - model.a) / s;
    // Two residual standard errors of memory, in samples of this bucket.
    return { batch, spread: (2 * model.sigma) / s };
  }
  // One length so far: its own line gives the fixed part and the per-sample bytes there.
  const byLength = new Map<number, Reading[]>();
  for (const r of readings) byLength.set(r.length, [...(byLength.get(r.length) ?? []), r]);
  const [other, own] = [...byLength].sort(([x], [y]) => Math.abs(x - length) - Math.abs(y - length))[0] ?? [];
  if (other === undefined || own === undefined) return undefined;
  const fit = fitLinear(own);
  if (!fit || !(fit.slope > 0) || !(cap > fit.intercept)) return undefined;
  const ratio = length / other;
  // s(len)/len rises with len and s(len)/len^2 falls: s at `length` lies between these two.
  const [sLow, sHigh] = [fit.slope * Math.min(ratio, ratio * ratio), fit.slope * Math.max(ratio, ratio * ratio)];
  const hi = (cap - fit.intercept) / sLow;
  const lo = (cap - fit.intercept) / sHigh;
  return { batch: (lo + hi) / 2, spread: (hi - lo) / 2 };
}
