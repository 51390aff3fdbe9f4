// The claim strategy over a trial function: baseline and candidate in interleaved pairs, a paired
// interval of the per-pair effect at each planned look, and the claim's verdict on it. The claim
// stage runs this; so does the calibration benchmark, through a simulated trial function.
import { judgeClaim, type Claim } from '../stats/claim.js';
import { pairedRatioInterval } from '../stats/log-ratio.js';
import { runPairs, type PairBudget, type PairsOutcome } from './adaptive.js';
import type { ClaimVerdict, LogInterval } from '../domain/index.js';

export interface ClaimLoopOptions extends PairBudget {
  claim: Claim;
  /** Half-width of the band around 1 within which an effect is too small to call (default 0.01). */
  noiseBand?: number;
  /** The claimed ratio of one pair from its two per-trial values, e.g. candidate / baseline throughput. */
  effectOf: (baseline: number, candidate: number) => number;
}

export interface ClaimLoopResult {
  verdict: ClaimVerdict;
  reason: string;
  /** The effect's interval at the look that decided (or the last look): a repeated CI, valid at any look. */
  effect: LogInterval | null;
  pairs: number;
  looks: number;
  stoppedBy: PairsOutcome<unknown>['stoppedBy'];
}

/**
 * `run` returns the trial's value (samples/s, seconds or bytes), or null when the trial failed
 * (the loop stops and the verdict is inconclusive).
 */
export async function runClaimPairs(
  run: (side: 'baseline' | 'candidate', pair: number) => Promise<number | null>,
  opts: ClaimLoopOptions,
): Promise<ClaimLoopResult> {
  const base: number[] = [];
  const cand: number[] = [];
  const noise = opts.noiseBand ?? 0.01;
  const out = await runPairs(
    async (side, pair) => {
      const v = await run(side === 'a' ? 'baseline' : 'candidate', pair);
      if (v === null) return false;
      (side === 'a' ? base : cand).push(v);
      return true;
    },
    (l) => {
      const ratios = base.slice(0, l.n).map((b, i) => opts.effectOf(b, cand[i]!));
      const effect = pairedRatioInterval(ratios, l.alpha);
      const j = judgeClaim(opts.claim, effect, noise);
      return { result: { ...j, effect }, decided: j.verdict !== 'inconclusive' };
    },
    opts,
  );
  const last = out.last ?? {
    verdict: 'inconclusive' as const,
    reason:
      `only ${out.pairs} pair(s) were measured, ` +
      `fewer than the first look at ${Math.min(opts.minPairs, opts.maxPairs)}`,
    effect: null,
  };
  return {
    verdict: last.verdict,
    reason: last.reason,
    effect: last.effect,
    pairs: out.pairs,
    looks: out.looks,
    stoppedBy: out.stoppedBy,
  };
}
