// Chooses where to split a max-batch bracket by the expected time to the exact answer: a dynamic
// program over the open bracket, with the max equally likely anywhere in it and a cost for each
// outcome of a probe. With equal costs it is bisection; a cheap OOM pulls the split up. (Optimal
// binary search with unequal comparison costs: the classic interval dynamic program, on a grid of at
// most GRID points.)

/** The most grid points the program plans over; wider brackets are planned on a coarser grid. */
const GRID = 96;

export interface PlanInput {
  /** Largest multiple that ran (0: none). */
  lo: number;
  /** Smallest multiple that failed (or one past the ceiling). */
  hi: number;
  /** Expected seconds of a probe at multiple k that runs, and one that fails. */
  cost: { ok: (k: number) => number; fail: (k: number) => number };
}

export interface Plan {
  /** The multiple to probe next. */
  k: number;
  /** Expected seconds until the bracket closes. */
  expectedSeconds: number;
}

/** The grid: every multiple of a narrow bracket; across a wide one, even steps (each rounded and rounded up). */
function grid(lo: number, hi: number): number[] {
  if (hi - lo <= GRID) return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
  const points = new Set<number>([lo, hi]);
  const half = GRID / 2;
  for (let i = 1; i < half; i++) {
    const x = ((hi - lo) * i) / half;
    points.add(lo + Math.round(x));
    points.add(lo + Math.ceil(x));
  }
  return [...points].sort((x, y) => x - y);
}

/** The probe with the least expected time to close the bracket (lo ran, hi failed). */
export function planProbe(input: PlanInput): Plan {
  const { lo, hi, cost } = input;
  if (hi - lo < 2) throw new RangeError(`the bracket (${lo}, ${hi}) is already closed`);
  const g = grid(lo, hi);
  const n = g.length;
  const okCost = g.map((k) => cost.ok(k));
  const failCost = g.map((k) => cost.fail(k));
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
      let bestValue = Infinity;
      let bestX = i + 1;
      for (let x = i + 1; x < j; x++) {
        // P(max >= g[x] | max in [g[i], g[j])), the max equally likely at each multiple: the probe at g[x] runs.
        const p = (g[j]! - g[x]!) / (g[j]! - g[i]!);
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
  return { k, expectedSeconds: n > 2 ? best[0]![n - 1]! : cell(0) };
}
