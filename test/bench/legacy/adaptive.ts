// Frozen copy of harness/search/adaptive.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Adaptive repetition: interleaved pairs of two configs (A B, B A, A B, ... so that neither side
// always runs second) are added until a look at the results decides, or the budget ends.
// `runPairs` is the loop; `adaptivePairs` decides a change with the two-gate rule; the claim stage
// looks at its claim's verdict instead.
import type { Interval } from './bootstrap.js';
import { decideChange, type ChangeDecision } from './decision.js';
import { medianRateRatioInterval, trialRates } from './throughput.js';
import type { StepSample } from './types.js';

export interface PairBudget {
  /** Pairs before the first look. */
  minPairs: number;
  maxPairs: number;
  /** Checked before each pair; true ends the loop (e.g. a trial or time budget). */
  overBudget?: () => boolean;
  /** The trials about to run, in order (the first minPairs pairs at once, then one pair at a time), for job arrays. */
  plan?: (trials: { side: 'a' | 'b'; pair: number }[]) => Promise<void>;
}

export interface PairsOutcome<T> {
  /** The last look's result (null when no look happened). */
  last: T | null;
  pairs: number;
  stoppedBy: 'decided' | 'max-pairs' | 'budget' | 'failed';
}

/**
 * Runs pairs; `run` returns false when a trial failed (the loop stops). After `minPairs`, and after
 * every further pair, `look` inspects the results and says whether they decide.
 */
export async function runPairs<T>(
  run: (side: 'a' | 'b', pair: number) => Promise<boolean>,
  look: () => { result: T; decided: boolean },
  budget: PairBudget,
): Promise<PairsOutcome<T>> {
  let last: T | null = null;
  const sides = (pair: number) => (pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const));
  for (let pair = 0; pair < budget.maxPairs; pair++) {
    if (budget.overBudget?.()) return { last, pairs: pair, stoppedBy: 'budget' };
    if (pair === 0 || pair >= budget.minPairs) {
      const upto = pair === 0 ? Math.min(Math.max(budget.minPairs, 1), budget.maxPairs) : pair + 1;
      const planned: { side: 'a' | 'b'; pair: number }[] = [];
      for (let p = pair; p < upto; p++) for (const side of sides(p)) planned.push({ side, pair: p });
      await budget.plan?.(planned);
    }
    for (const side of sides(pair)) {
      if (!(await run(side, pair))) return { last, pairs: pair, stoppedBy: 'failed' };
    }
    if (pair + 1 < budget.minPairs) continue;
    const l = look();
    last = l.result;
    if (l.decided) return { last, pairs: pair + 1, stoppedBy: 'decided' };
  }
  return { last, pairs: budget.maxPairs, stoppedBy: 'max-pairs' };
}

export type PairRunner = (side: 'a' | 'b', pair: number) => Promise<StepSample[] | null>;

export interface AdaptiveOptions extends PairBudget {
  /** Noise band around a ratio of 1 (default 1%). */
  band?: number;
  alpha?: number;
  seed?: number;
  /** Resamples per interim CI (fewer than the final 10,000 keep the looks cheap). */
  resamples?: number;
}

export interface AdaptiveResult {
  decision: ChangeDecision;
  /** Throughput of b over a. */
  ratio: Interval | null;
  pairs: number;
  stoppedBy: 'change' | 'equivalent' | 'budget' | 'failed';
}

/** Adds pairs until the two-gate decision calls a change, the CI fits inside the band (no change), or the budget ends. */
export async function adaptivePairs(run: PairRunner, opts: AdaptiveOptions): Promise<AdaptiveResult> {
  const band = opts.band ?? 0.01;
  const a: StepSample[][] = [];
  const b: StepSample[][] = [];
  const out = await runPairs(
    async (side, pair) => {
      const steps = await run(side, pair);
      if (steps) (side === 'a' ? a : b).push(steps);
      return steps !== null;
    },
    () => {
      const ratio = medianRateRatioInterval(a, b, { seed: opts.seed ?? 1, resamples: opts.resamples ?? 2000 });
      const decision = decideChange(trialRates(a), trialRates(b), ratio, {
        band,
        ...(opts.alpha !== undefined ? { alpha: opts.alpha } : {}),
      });
      const equivalent = ratio !== null && ratio.low >= 1 - band && ratio.high <= 1 + band;
      return { result: { decision, ratio, equivalent }, decided: decision.direction !== 'same' || equivalent };
    },
    opts,
  );
  const last = out.last ?? { decision: decideChange([], [], null, { band }), ratio: null, equivalent: false };
  const stoppedBy =
    out.stoppedBy === 'failed'
      ? 'failed'
      : out.stoppedBy === 'decided'
        ? last.decision.direction !== 'same'
          ? 'change'
          : 'equivalent'
        : 'budget';
  return { decision: last.decision, ratio: last.ratio, pairs: out.pairs, stoppedBy };
}
