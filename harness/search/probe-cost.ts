// What a probe costs, learnt from the probes so far: seconds against batch, separately for probes
// that ran (the slowest near the max) and probes that failed (an OOM often fails fast).

interface Point {
  batch: number;
  seconds: number;
}

/** A line a + b * batch with a, b >= 0 through the points (least squares; one point: a constant). */
function fitCost(points: readonly Point[]): ((batch: number) => number) | undefined {
  if (points.length === 0) return undefined;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.batch, 0) / n;
  const my = points.reduce((s, p) => s + p.seconds, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.batch - mx) ** 2;
    sxy += (p.batch - mx) * (p.seconds - my);
  }
  let slope = sxx > 0 ? Math.max(0, sxy / sxx) : 0;
  let intercept = my - slope * mx;
  if (intercept < 0) {
    // Through the origin instead: cost proportional to the batch.
    intercept = 0;
    slope = points.reduce((s, p) => s + p.batch * p.seconds, 0) / points.reduce((s, p) => s + p.batch ** 2, 0);
  }
  return (batch) => intercept + slope * batch;
}

export class ProbeCosts {
  private readonly ran: Point[] = [];
  private readonly failed: Point[] = [];

  /** Adds a search probe's wall time (seconds null: not measured, ignored). */
  add(batch: number, ok: boolean, seconds: number | null): void {
    if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return;
    (ok ? this.ran : this.failed).push({ batch, seconds });
  }

  /**
   * Expected seconds of a probe at `batch` by its outcome. An outcome not yet seen costs what the
   * other one does (no asymmetry is assumed without evidence); with no probe at all both cost 1.
   */
  estimate(): { ok: (batch: number) => number; fail: (batch: number) => number } {
    const ok = fitCost(this.ran);
    const fail = fitCost(this.failed);
    const one = () => 1;
    return { ok: ok ?? fail ?? one, fail: fail ?? ok ?? one };
  }
}
