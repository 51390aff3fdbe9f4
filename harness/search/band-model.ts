// The band a batch limit moves in, as a model. Identical runs do not fail at the same batch: under an
// address-space cap the limit moves with glibc arenas and threads, and allocators and loaders differ from
// run to run. Each run is taken to have its own limit, drawn from a normal distribution (mean `limit`,
// standard deviation `spread`); a run at batch b passes when its limit is at least b. The model is fitted
// to every run of one length (passes and OOMs) as a posterior on a grid: a uniform prior on the mean and a
// log-uniform prior on the spread, from SPREAD_MIN to SPREAD_MAX of the batch scale, so a handful of runs
// that happen to separate cleanly cannot talk the spread down to zero. It answers the chance that the next
// run at a batch fails (the posterior predictive), which decides the max a stage may write.
import { lnNormalCdf, normalCdf } from '../stats/proportion.js';

export interface BandRun {
  batch: number;
  /** Passed (ran until memory flattened); false: ran out of memory. */
  ok: boolean;
}

export interface BandFit {
  /** Runs the model was fitted on. */
  runs: number;
  /** Posterior mean of the mean limit, in samples. */
  limit: number;
  /** Posterior mean of the spread (standard deviation of a run's limit), in samples. */
  spread: number;
  /** The chance that the next run at `batch` fails. */
  risk(batch: number): number;
}

/** The spread's prior range, as fractions of the largest batch that passed. */
export const SPREAD_MIN = 0.0005;
export const SPREAD_MAX = 0.03;
const SPREAD_POINTS = 40;
/** Grid points of the mean limit per spread value, at most (step: a quarter of the spread, or coarser). */
const LIMIT_POINTS = 2000;
/** Grid points whose weight is below e^-PRUNE of the largest are dropped. */
const PRUNE = 30;

/**
 * The band model of `runs`, or undefined when they show no boundary: every run passed (no failure to
 * place a limit below) or every run failed (no pass to place it above).
 */
export function fitBand(runs: readonly BandRun[], o: { spreadMax?: number } = {}): BandFit | undefined {
  const spreadMax = o.spreadMax ?? SPREAD_MAX;
  const rows = countRuns(runs);
  const passes = rows.filter((g) => g.passed > 0).map((g) => g.batch);
  if (passes.length === 0 || rows.every((g) => g.failed === 0)) return undefined;
  const scale = Math.max(...passes);
  const lowest = Math.min(...rows.map((g) => g.batch));
  const highest = Math.max(...rows.map((g) => g.batch));
  const mus: number[] = [];
  const sigmas: number[] = [];
  const logw: number[] = [];
  for (let i = 0; i < SPREAD_POINTS; i++) {
    const sigma = scale * SPREAD_MIN * (spreadMax / SPREAD_MIN) ** (i / (SPREAD_POINTS - 1));
    const from = lowest - 6 * sigma;
    const to = highest + 6 * sigma;
    const step = Math.max(sigma / 4, (to - from) / LIMIT_POINTS);
    for (let mu = from; mu <= to; mu += step) {
      let ll = Math.log(step); // a uniform prior on the mean: each point stands for `step` of it
      for (const g of rows) {
        const z = (mu - g.batch) / sigma;
        if (g.passed > 0) ll += g.passed * lnNormalCdf(z);
        if (g.failed > 0) ll += g.failed * lnNormalCdf(-z);
      }
      mus.push(mu);
      sigmas.push(sigma);
      logw.push(ll);
    }
  }
  const top = Math.max(...logw);
  const keep: { mu: number; sigma: number; w: number }[] = [];
  let total = 0;
  for (let i = 0; i < logw.length; i++) {
    if (logw[i]! < top - PRUNE) continue;
    const w = Math.exp(logw[i]! - top);
    keep.push({ mu: mus[i]!, sigma: sigmas[i]!, w });
    total += w;
  }
  const mean = (f: (p: { mu: number; sigma: number }) => number) => keep.reduce((s, p) => s + p.w * f(p), 0) / total;
  return {
    runs: runs.length,
    limit: mean((p) => p.mu),
    spread: mean((p) => p.sigma),
    risk: (batch) => mean((p) => normalCdf((batch - p.mu) / p.sigma)),
  };
}

/**
 * The largest multiple (of m) below `belowK` whose chance of failing a run is at most `maxRisk`, or 0 when
 * none is. The risk grows with the batch, so the search walks down from the top.
 */
export function largestWithin(fit: BandFit, maxRisk: number, m: number, belowK: number): number {
  let hi = belowK - 1;
  if (hi < 1 || fit.risk(m) > maxRisk) return 0;
  if (fit.risk(hi * m) <= maxRisk) return hi;
  let lo = 1;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fit.risk(mid * m) <= maxRisk) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** A chance of failing as the report and the notes print it: two decimals below 1%, else one. */
export function riskPercent(x: number): string {
  return `${(x * 100).toFixed(x < 0.01 ? 2 : 1)}%`;
}

/** Runs counted by batch, ascending, as run.json's band.runs keeps them. */
export function countRuns(runs: readonly BandRun[]): { batch: number; passed: number; failed: number }[] {
  const by = new Map<number, { batch: number; passed: number; failed: number }>();
  for (const r of runs) {
    const row = by.get(r.batch) ?? { batch: r.batch, passed: 0, failed: 0 };
    if (r.ok) row.passed += 1;
    else row.failed += 1;
    by.set(r.batch, row);
  }
  return [...by.values()].sort((a, b) => a.batch - b.batch);
}

/** The runs a band's `runs` rows stand for (run.json keeps them counted by batch). */
export function bandRunsOf(rows: readonly { batch: number; passed: number; failed: number }[]): BandRun[] {
  return rows.flatMap((r) => [
    ...Array.from({ length: r.passed }, () => ({ batch: r.batch, ok: true })),
    ...Array.from({ length: r.failed }, () => ({ batch: r.batch, ok: false })),
  ]);
}
