// Group-sequential looks with alpha spending (Lan & DeMets 1983; the power family of Kim & DeMets
// 1987), combined over looks by the union (Bonferroni) bound. A decision is taken only at planned
// looks; look k tests at the alpha that the spending function gives it, so the chance of any wrong
// call over all looks stays below alpha however the looks are correlated. The interval printed at
// look k is a repeated confidence interval (Jennison & Turnbull 2000, ch. 9): all of them cover the
// truth at once with probability >= 1 - alpha, so the one at the look that decided deserves its 95%.

/** Two-sided error rate of every decision, over all looks. */
export const DEFAULT_ALPHA = 0.05;
/** Exponent of the spending function alpha * t^rho: 2 spends little early, keeping the final look strong. */
export const SPENDING_RHO = 2;
/** Growth of the sample between planned looks: about 1.4x, five looks from 5 to 20. */
export const LOOK_GROWTH = 1.4;

export interface Look {
  /** Sample size (pairs, rounds) at which this look happens. */
  n: number;
  /** Alpha spent at this look (two-sided). */
  alpha: number;
  /** Alpha spent up to and including this look. */
  cumulative: number;
}

/**
 * The planned looks from `min` to `max` (both included), growing by LOOK_GROWTH, each with its
 * share alpha * ((n_k / max)^rho - (n_{k-1} / max)^rho).
 */
export function lookPlan(min: number, max: number, alpha = DEFAULT_ALPHA, rho = SPENDING_RHO): Look[] {
  if (!(Number.isInteger(min) && Number.isInteger(max) && min >= 1 && max >= min)) {
    throw new RangeError(`lookPlan: expected integers 1 <= min <= max, got min ${min}, max ${max}`);
  }
  const ns: number[] = [min];
  while (ns[ns.length - 1]! < max) {
    const last = ns[ns.length - 1]!;
    ns.push(Math.min(max, Math.max(last + 1, Math.round(last * LOOK_GROWTH))));
  }
  // A last step of a single pair or round adds a look for almost nothing: merge it into the final look.
  if (ns.length > 2 && ns[ns.length - 1]! - ns[ns.length - 2]! === 1 && ns[ns.length - 2]! > min)
    ns.splice(ns.length - 2, 1);
  let spent = 0;
  return ns.map((n) => {
    const cumulative = alpha * (n / max) ** rho;
    const look = { n, alpha: cumulative - spent, cumulative };
    spent = cumulative;
    return look;
  });
}

/**
 * The plan as a run goes through it: the alpha of each planned look, and after a stop between
 * planned looks (a budget, a failure) the alpha left for one last look.
 */
export class LookSchedule {
  readonly plan: readonly Look[];
  private spent = 0;
  private lookedAt = 0;

  constructor(
    min: number,
    max: number,
    private readonly alpha = DEFAULT_ALPHA,
  ) {
    this.plan = lookPlan(Math.min(min, max), max, alpha);
  }

  /** The alpha of the look planned at `n`, taking it; null when no look is planned there. */
  take(n: number): number | null {
    const look = this.plan.find((l) => l.n === n);
    if (!look) return null;
    this.spent = look.cumulative;
    this.lookedAt = n;
    return look.alpha;
  }

  /** The alpha left for a last look at `n`, taking it; null when `n` was already looked at or nothing is left. */
  leftover(n: number): number | null {
    const left = this.alpha - this.spent;
    if (n <= this.lookedAt || left <= 1e-12) return null;
    this.spent = this.alpha;
    this.lookedAt = n;
    return left;
  }

  /** The next planned sample size after `n` (the last one when none is). */
  after(n: number): number {
    return this.plan.find((l) => l.n > n)?.n ?? this.plan[this.plan.length - 1]!.n;
  }
}
