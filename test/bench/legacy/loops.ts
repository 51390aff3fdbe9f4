// Frozen copy of the decisions in harness/engine/stages/claim.ts and harness/engine/stages/compare.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// The stages' journaling, planning, budgets and reporting are left out; what decides a verdict is kept:
// the claim stage's runPairs loop with judge() after every pair from min_pairs (throughput metric), and
// the compare stage's medianRateRatioInterval + decideChange of one arm against the baseline.
import type { Interval } from './bootstrap.js';
import { judgeClaim, parseClaim, type Claim, type ClaimVerdict } from './claim.js';
import { decideChange, type ChangeDecision } from './decision.js';
import { mannWhitney } from './mann-whitney.js';
import { medianRateRatioInterval, trialRates } from './throughput.js';
import type { StepSample } from './types.js';
import { runPairs } from './adaptive.js';
import { speedVerdict, type Direction, type SpeedVerdict } from './verdict.js';

/** One trial: a = baseline, b = candidate (claim) or the compared arm (compare); pair is the pair or round, 0-based. */
export type LegacyTrialFn = (side: 'a' | 'b', pair: number) => Promise<StepSample[]>;

export interface LegacyClaimOptions {
  /** Tolerance of a point claim (the claim stage's default 0.1). */
  tolerance?: number;
  /** min_pairs (default 5) and max_pairs (default 20), as the claim stage's schema. */
  minPairs?: number;
  maxPairs?: number;
  /** The experiment's seed for the bootstrap (default 1). */
  seed?: number;
  /** Bootstrap resamples per look; HEAD uses BOOTSTRAP_RESAMPLES (10,000). Fewer only to make simulations cheap. */
  resamples?: number;
}

export interface LegacyClaimResult {
  claim: Claim;
  verdict: ClaimVerdict;
  reason: string;
  /** Candidate throughput over baseline throughput (median over trials), with its 95% CI. */
  speedup: Interval | null;
  /** Pairs run. */
  pairs: number;
  stoppedBy: 'decided' | 'max-pairs' | 'budget' | 'failed';
  /** Mann-Whitney two-sided p of the per-trial throughputs (reported by HEAD, not used for the verdict). */
  p: number | null;
}

/**
 * HEAD's claim stage decision for a throughput claim: interleaved pairs (A B, B A, ...) via runPairs,
 * judged after every pair from min_pairs with medianRateRatioInterval + judgeClaim; stops at the first
 * verdict other than inconclusive or at max_pairs. A trial always succeeds here.
 */
export async function legacyClaimLoop(
  claimText: string,
  trial: LegacyTrialFn,
  opts: LegacyClaimOptions = {},
): Promise<LegacyClaimResult> {
  const claim = parseClaim(claimText, opts.tolerance ?? 0.1);
  const minPairs = opts.minPairs ?? 5;
  const maxPairs = opts.maxPairs ?? 20;
  const seed = opts.seed ?? 1;
  const base: StepSample[][] = [];
  const cand: StepSample[][] = [];
  const judge = (): { verdict: ClaimVerdict; reason: string; speedup: Interval | null } => {
    if (base.length === 0 || cand.length === 0)
      return { verdict: 'inconclusive', reason: 'not measured yet', speedup: null };
    const speedup = medianRateRatioInterval(base, cand, {
      seed,
      ...(opts.resamples !== undefined ? { resamples: opts.resamples } : {}),
    });
    return { ...judgeClaim(claim, speedup), speedup };
  };
  const out = await runPairs(
    async (side, pair) => {
      (side === 'a' ? base : cand).push(await trial(side, pair));
      return true;
    },
    () => {
      const j = judge();
      return { result: j, decided: j.verdict !== 'inconclusive' };
    },
    { minPairs, maxPairs },
  );
  const judged = out.last ?? {
    ...judge(),
    verdict: 'inconclusive' as const,
    reason: `only ${out.pairs} pair(s) ran before the budget ended (min_pairs ${minPairs})`,
  };
  let reason = judged.reason;
  if (judged.verdict === 'inconclusive')
    reason += out.stoppedBy === 'budget' ? '; the budget ran out' : `; stopped at max_pairs (${maxPairs})`;
  const rb = trialRates(base);
  const rc = trialRates(cand);
  const p = rb.length > 0 && rc.length > 0 ? mannWhitney(rb, rc).p : null;
  return {
    claim,
    verdict: judged.verdict,
    reason,
    speedup: judged.speedup,
    pairs: out.pairs,
    stoppedBy: out.stoppedBy,
    p,
  };
}

export interface LegacyCompareOptions {
  /** Rounds: each runs the baseline, then the arm (the compare stage's repeats, default 5). */
  rounds?: number;
  /** noise_band (default 0.02). */
  band?: number;
  seed?: number;
  /** Bootstrap resamples; HEAD uses 10,000. */
  resamples?: number;
}

export interface LegacyCompareResult {
  verdict: SpeedVerdict;
  direction: Direction;
  /** Arm throughput over baseline throughput (median over trials), with its 95% CI. */
  ratio: Interval | null;
  decision: ChangeDecision;
  rounds: number;
}

/**
 * HEAD's compare stage verdict for one arm against the baseline: `rounds` rounds of baseline then arm,
 * then medianRateRatioInterval(baseline, arm) and decideChange on the per-trial throughputs with the noise band.
 */
export async function legacyCompare(
  trial: LegacyTrialFn,
  opts: LegacyCompareOptions = {},
): Promise<LegacyCompareResult> {
  const rounds = opts.rounds ?? 5;
  const band = opts.band ?? 0.02;
  const seed = opts.seed ?? 1;
  const base: StepSample[][] = [];
  const arm: StepSample[][] = [];
  for (let round = 0; round < rounds; round++) {
    base.push(await trial('a', round));
    arm.push(await trial('b', round));
  }
  const ratio = medianRateRatioInterval(base, arm, {
    seed,
    ...(opts.resamples !== undefined ? { resamples: opts.resamples } : {}),
  });
  const decision = decideChange(trialRates(base), trialRates(arm), ratio, { band });
  return { verdict: speedVerdict(decision.direction), direction: decision.direction, ratio, decision, rounds };
}
