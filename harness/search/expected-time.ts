// Chooses the next max-batch probe by the expected time to the exact answer: a dynamic program over
// the open bracket, with a belief about where the max lies and a cost for each outcome of a probe.
// With equal costs and a flat belief it is bisection; a cheap OOM pulls probes up, a sharp memory
// prediction pulls them to either side of it. (Optimal binary search with unequal comparison costs
// and a prior: the classic interval dynamic program, restricted to a grid of at most GRID points.)

import { normalCdf } from '../stats/mann-whitney.js';

/** The most grid points the program plans over; wider brackets are planned on a coarser grid. */
const GRID = 96;

export interface Belief {
  /** Predicted max, in multiples (may lie outside the bracket). */
  centre: number;
  /** Its uncertainty, in multiples (a standard deviation, at least 0.5). */
  sd: number;
  /** Weight of a flat belief mixed in, for when the prediction is wrong. */
  flat: number;
}

export interface PlanInput {
  /** Largest multiple that ran (0: none). */
  lo: number;
  /** Smallest multiple that failed (or one past the ceiling). */
  hi: number;
  belief?: Belief;
  /** Expected seconds of a probe at multiple k that runs, and one that fails. */
  cost: { ok: (k: number) => number; fail: (k: number) => number };
}

export interface Plan {
  /** The multiple to probe next. */
  k: number;
  /** The belief's probability that it runs. */
  pOk: number;
  /** Expected seconds until the bracket closes. */
  expectedSeconds: number;
}

/** Mass of the belief on each multiple lo..hi-1 (the max is one of them), as prefix sums. */
function prefixMass(lo: number, hi: number, belief: Belief | undefined): (k: number) => number {
  const w = hi - lo;
  if (!belief) return (k) => (k - lo) / w;
  const sd = Math.max(0.5, belief.sd);
  const cdf = (x: number) => normalCdf((x - belief.centre) / sd);
  // Mass of max = k is the Gaussian over [k, k + 1) (k itself runs, k + 1 fails).
  const gaussian = cdf(hi) - cdf(lo);
  const flat = belief.flat;
  return (k) => {
    const g = gaussian > 1e-12 ? (cdf(k) - cdf(lo)) / gaussian : (k - lo) / w;
    return (1 - flat) * g + (flat * (k - lo)) / w;
  };
}

/** The grid: every multiple of a narrow bracket; of a wide one, even steps plus the belief's quantiles. */
function grid(lo: number, hi: number, mass: (k: number) => number): number[] {
  if (hi - lo <= GRID) return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
  const points = new Set<number>([lo, hi]);
  const half = GRID / 2;
  for (let i = 1; i < half; i++) points.add(lo + Math.round(((hi - lo) * i) / half));
  // Quantiles of the belief by bisection on its prefix mass.
  for (let i = 1; i < half; i++) {
    const q = i / half;
    let a = lo;
    let b = hi;
    while (b - a > 1) {
      const mid = Math.floor((a + b) / 2);
      if (mass(mid) < q) a = mid;
      else b = mid;
    }
    points.add(b);
  }
  return [...points].filter((k) => k >= lo && k <= hi).sort((x, y) => x - y);
}

/** The probe with the least expected time to close the bracket (lo ran, hi failed). */
export function planProbe(input: PlanInput): Plan {
  const { lo, hi, cost } = input;
  if (hi - lo < 2) throw new RangeError(`the bracket (${lo}, ${hi}) is already closed`);
  const mass = prefixMass(lo, hi, input.belief);
  const g = grid(lo, hi, mass);
  const n = g.length;
  const okCost = g.map((k) => cost.ok(k));
  const failCost = g.map((k) => cost.fail(k));
  const m = g.map((k) => mass(k));
  // A cell between adjacent grid points wider than one multiple is closed by bisection.
  const cell = (i: number): number => {
    const width = g[i + 1]! - g[i]!;
    if (width <= 1) return 0;
    const mid = Math.floor((g[i]! + g[i + 1]!) / 2);
    return Math.ceil(Math.log2(width)) * ((cost.ok(mid) + cost.fail(mid)) / 2);
  };
  // best[i][j]: expected seconds to close (g[i], g[j]) given the max lies there; choice[i][j]: its probe.
  const best: Float64Array[] = Array.from({ length: n }, () => new Float64Array(n));
  const choice: Int32Array[] = Array.from({ length: n }, () => new Int32Array(n));
  for (let i = 0; i + 1 < n; i++) best[i]![i + 1] = cell(i);
  for (let span = 2; span < n; span++) {
    for (let i = 0; i + span < n; i++) {
      const j = i + span;
      const total = m[j]! - m[i]!;
      let bestValue = Infinity;
      let bestX = i + 1;
      for (let x = i + 1; x < j; x++) {
        // P(max >= g[x] | max in [g[i], g[j])): the probe at g[x] runs.
        const p = total > 1e-15 ? (m[j]! - m[x]!) / total : (g[j]! - g[x]!) / (g[j]! - g[i]!);
        const v = p * (okCost[x]! + best[x]![j]!) + (1 - p) * (failCost[x]! + best[i]![x]!);
        if (v < bestValue) {
          bestValue = v;
          bestX = x;
        }
      }
      best[i]![j] = bestValue;
      choice[i]![j] = bestX;
    }
  }
  const x = n > 2 ? choice[0]![n - 1]! : 0;
  const k = n > 2 ? g[x]! : Math.floor((lo + hi) / 2);
  const total = m[n - 1]! - m[0]!;
  const pOk = total > 1e-15 ? (m[n - 1]! - mass(k)) / total : (hi - k) / (hi - lo);
  return { k, pOk, expectedSeconds: n > 2 ? best[0]![n - 1]! : cell(0) };
}
