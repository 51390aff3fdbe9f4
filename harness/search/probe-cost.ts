// What a probe costs, learnt from the probes so far: seconds against batch, separately for probes
// that ran (the slowest near the max) and probes that failed (an OOM often fails fast).
import { fitLinear } from './memory-fit.js';

interface Point {
  batch: number;
  seconds: number;
}

/** A line a + b * batch with a, b >= 0 through the points (least squares; one batch only: their mean). */
function fitCost(points: readonly Point[]): ((batch: number) => number) | undefined {
  if (points.length === 0) return undefined;
  const mean = points.reduce((s, p) => s + p.seconds, 0) / points.length;
  const fit = fitLinear(points.map((p) => ({ batch: p.batch, bytes: p.seconds })));
  if (fit === undefined || fit.slope <= 0) return () => mean;
  if (fit.intercept >= 0) return (batch) => fit.intercept + fit.slope * batch;
  // Through the origin instead: cost proportional to the batch.
  const slope = points.reduce((s, p) => s + p.batch * p.seconds, 0) / points.reduce((s, p) => s + p.batch ** 2, 0);
  return (batch) => slope * batch;
}

/** What search probes have cost so far, by outcome: a value, grown by withCost. */
export interface ProbeCosts {
  readonly ran: readonly Point[];
  readonly failed: readonly Point[];
}

export const NO_COSTS: ProbeCosts = { ran: [], failed: [] };

/** The costs with a search probe's wall time added (seconds null: not measured, ignored). */
export function withCost(costs: ProbeCosts, batch: number, ok: boolean, seconds: number | null): ProbeCosts {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return costs;
  const point = { batch, seconds };
  return ok ? { ...costs, ran: [...costs.ran, point] } : { ...costs, failed: [...costs.failed, point] };
}

/**
 * Expected seconds of a probe at `batch` by its outcome. An outcome not yet seen costs what the
 * other one does (no asymmetry is assumed without evidence); with no probe at all both cost 1.
 */
export function costEstimate(costs: ProbeCosts): { ok: (batch: number) => number; fail: (batch: number) => number } {
  const ok = fitCost(costs.ran);
  const fail = fitCost(costs.failed);
  const one = () => 1;
  return { ok: ok ?? fail ?? one, fail: fail ?? ok ?? one };
}
