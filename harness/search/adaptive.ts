// Adaptive repetition for a two-config decision: interleaved pairs (A B, B A, ...) are added until
// the two-gate decision calls a change, the CI of the ratio fits inside the noise band (no change,
// decided), or the budget ends (undecided, which counts as no change).
import type { Interval } from '../stats/bootstrap.js';
import { decideChange, type ChangeDecision } from '../stats/decision.js';
import { medianRateRatioInterval, trialRates } from '../stats/throughput.js';
import type { StepSample } from '../trial/record.js';

export type PairRunner = (side: 'a' | 'b', pair: number) => Promise<StepSample[] | null>;

export interface AdaptiveOptions {
  minPairs: number;
  maxPairs: number;
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

export async function adaptivePairs(run: PairRunner, opts: AdaptiveOptions): Promise<AdaptiveResult> {
  const band = opts.band ?? 0.01;
  const a: StepSample[][] = [];
  const b: StepSample[][] = [];
  let last: { decision: ChangeDecision; ratio: Interval | null } = { decision: decideChange([], [], null, { band }), ratio: null };
  for (let pair = 0; pair < opts.maxPairs; pair++) {
    for (const side of pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      const steps = await run(side, pair);
      if (!steps) return { ...last, pairs: pair, stoppedBy: 'failed' };
      (side === 'a' ? a : b).push(steps);
    }
    if (pair + 1 < opts.minPairs) continue;
    const ratio = medianRateRatioInterval(a, b, { seed: opts.seed ?? 1, resamples: opts.resamples ?? 2000 });
    const decision = decideChange(trialRates(a), trialRates(b), ratio, { band, ...(opts.alpha !== undefined ? { alpha: opts.alpha } : {}) });
    last = { decision, ratio };
    if (decision.direction !== 'same') return { ...last, pairs: pair + 1, stoppedBy: 'change' };
    if (ratio && ratio.low >= 1 - band && ratio.high <= 1 + band) return { ...last, pairs: pair + 1, stoppedBy: 'equivalent' };
  }
  return { ...last, pairs: opts.maxPairs, stoppedBy: 'budget' };
}
