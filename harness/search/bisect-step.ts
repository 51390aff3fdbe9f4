// A bisection step measured by the compare strategy itself: the tested commit and the good commit
// as the two arms of runCompare (interleaved rounds, pairs, the sequential test and its looks), so
// a step's verdict is the compare stage's decision, never a second statistic. Steps are judged
// against the middle of the regression (the band is half the good/bad slowdown, at least the
// compare band) and one-sided (runCompare's noiseBandAbove: a commit is slower when its CI lies below
// 1 - band, the same when it lies above); a repeat with the larger budget replays the rounds already
// run and adds rounds.
import { runCompare, type CompareArm } from './compare.js';
import { ratioThroughput } from '../stats/throughput.js';
import type { ArmPlanFn, ArmTrial, ArmTrialFn } from './sweep.js';
import type { MeasureContext, MeasureFn, Measurement } from './bisect.js';
import type { Config, Interval } from '../domain/index.js';

/** The parameter that names the commit in an arm's config (the trial function reads it). */
export const COMMIT_PARAMETER = 'commit';

export interface CompareOracleOptions {
  /** Runs one trial of the commit in `config[COMMIT_PARAMETER]`. */
  run: ArmTrialFn;
  good: string;
  /** Rounds before the first look, and the most rounds of a first attempt. */
  minRounds: number;
  maxRounds: number;
  /**
   * Rounds before the good/bad check's first look (default maxRounds: one look): its estimate sets
   * the band of every step, and a check that stopped at 5 rounds set it so loosely that 1 in 7
   * simulated bisections (5% noise, 10% step) ended in a range instead of 1 in 14.
   */
  checkMinRounds?: number;
  /** The most rounds of the repeat of an undecided step (the rounds already run count). */
  extendedMaxRounds: number;
  /** The compare band: the good/bad check's, and the smallest band of a step. */
  noiseBand: number;
  alpha?: number;
  plan?: ArmPlanFn;
}

/**
 * The band of a step: a commit counts as slower when its ratio's CI lies below the middle between
 * good (1) and bad, and as the same when it lies above it.
 */
export function stepBand(bad: Interval | null, noiseBand: number): number {
  if (!bad || !(bad.estimate < 1)) return noiseBand;
  return Math.max(noiseBand, (1 - bad.estimate) / 2);
}

const configOf = (commit: string): Config => ({ [COMMIT_PARAMETER]: commit });
const keyOf = (config: Config): string => String(config[COMMIT_PARAMETER]);

/** The measure function of runBisect over a trial function, through runCompare. */
export function compareOracle(opts: CompareOracleOptions): MeasureFn {
  if (!(opts.extendedMaxRounds >= opts.maxRounds))
    throw new RangeError(
      `bisect: the repeat's rounds (${opts.extendedMaxRounds}) must be at least the first attempt's ` +
        `(${opts.maxRounds}); raise the repeat's rounds`,
    );
  // Trials of earlier attempts by commit, keyed by arm and round, replayed by a repeat.
  const recorded = new Map<string, Map<string, ArmTrial>>();
  return async (commit: string, context: MeasureContext): Promise<Measurement> => {
    const previous = context.attempt === 2 ? (recorded.get(commit) ?? new Map<string, ArmTrial>()) : new Map();
    const slot = (config: Config, round: number) => `${keyOf(config)}@${round}`;
    const band = context.purpose === 'check' ? opts.noiseBand : stepBand(context.bad, opts.noiseBand);
    let fresh = 0;
    const out = await runCompare(
      async (config, o) => {
        const old = previous.get(slot(config, o.round));
        if (old) return old;
        fresh += 1;
        return opts.run(config, o);
      },
      {
        arms: [configOf(opts.good), configOf(commit)],
        keyOf,
        minRounds: context.purpose === 'check' ? (opts.checkMinRounds ?? opts.maxRounds) : opts.minRounds,
        maxRounds: context.attempt === 1 ? opts.maxRounds : opts.extendedMaxRounds,
        noiseBand: band,
        // One-sided: a step asks "slower than the middle or not"; faster counts as not slower.
        noiseBandAbove: Number.POSITIVE_INFINITY,
        ...(opts.alpha !== undefined ? { alpha: opts.alpha } : {}),
        budget: {},
        ...(opts.plan ? { plan: planFresh(opts.plan, previous, slot) } : {}),
      },
    );
    const [base, arm] = out.arms as [CompareArm, CompareArm];
    const keep = new Map<string, ArmTrial>();
    for (const a of [base, arm]) for (const t of a.trials) keep.set(slot(a.config, t.round), t);
    recorded.set(commit, keep);
    const common = { band, trials: fresh, rounds: out.rounds, pairs: pairRatios(arm, base) };
    if (base.stopped || arm.stopped)
      return {
        verdict: 'skipped',
        ratio: null,
        ...common,
        failure: { phase: 'run', side: base.stopped ? 'good' : 'commit', detail: (base.stopped ?? arm.stopped)! },
      };
    const verdict = arm.decision === 'slower' ? 'slower' : arm.decision === 'undecided' ? 'undecided' : 'same';
    return { verdict, ratio: arm.ratio, ...common };
  };
}

/** The plan of a round without the trials a repeat replays. */
function planFresh(
  plan: ArmPlanFn,
  previous: ReadonlyMap<string, ArmTrial>,
  slot: (config: Config, round: number) => string,
): ArmPlanFn {
  return async (trials) => {
    const fresh = trials.filter((t) => !previous.has(slot(t.config, t.opts.round)));
    if (fresh.length > 0) await plan(fresh);
  };
}

/** Per-round throughput ratios of the arm to the baseline, over rounds where both succeeded. */
function pairRatios(arm: CompareArm, base: CompareArm): number[] {
  const byRound = new Map(base.trials.map((t) => [t.round, t.outcome === 'ok' ? ratioThroughput(t.steps) : null]));
  const out: number[] = [];
  for (const t of arm.trials) {
    const a = t.outcome === 'ok' ? ratioThroughput(t.steps) : null;
    const b = byRound.get(t.round);
    if (a != null && b != null && a > 0 && b > 0) out.push(a / b);
  }
  return out;
}
