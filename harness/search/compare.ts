// The compare strategy over a trial function: the baseline and the other arms in rounds whose
// order reverses every round (B A C, C A B, ...: each arm runs before and after the baseline
// equally often), so that drift spreads over every arm. Each arm is paired with the baseline's
// trial of the same round, and judged at the planned looks of a group-sequential plan with its
// share of alpha (split over the arms: Bonferroni), until it is decided (faster, slower, or
// equivalent within the noise band) or the rounds or the budget end. Decided arms stop running.
import { pairedRatioInterval } from '../stats/log-ratio.js';
import { DEFAULT_ALPHA, LookSchedule } from '../stats/sequential.js';
import { ratioThroughput } from '../stats/throughput.js';
import type { ArmPlanFn, ArmTrial, ArmTrialFn } from './sweep.js';
import type { ArmDecision, Config, LogInterval, StageNote } from '../domain/index.js';

export interface CompareOptions {
  /** Each arm's config: the compared parameter's value (other values are fixed by the caller). */
  arms: readonly Config[];
  /** Index in `arms` of the baseline (default 0). */
  baseline?: number;
  keyOf: (config: Config) => string;
  /** Rounds before the first look. */
  minRounds: number;
  /** The most rounds. */
  maxRounds: number;
  /** A ratio whose interval lies within 1 +/- band is "no difference"; a change must lie outside it. */
  noiseBand: number;
  /**
   * The band's upper side for throughput, when it differs (default `noiseBand`). Infinity makes the
   * decision one-sided: "equivalent" then means "not slower than 1 - noiseBand" (what a bisection
   * step asks), and an arm stops as soon as its interval is on either side of 1 - noiseBand.
   */
  noiseBandAbove?: number;
  /** Two-sided error rate of the whole stage, over every arm and look (default 0.05). */
  alpha?: number;
  budget: { trials?: number; seconds?: number };
  plan?: ArmPlanFn;
}

export type MemoryDecision = 'less memory' | 'more memory' | 'equivalent' | 'undecided';

export interface CompareArm {
  key: string;
  config: Config;
  baseline: boolean;
  /** Trials in run order; `round` says which baseline trial each pairs with. */
  trials: (ArmTrial & { round: number })[];
  /** Set when the arm stopped being run: it failed before any trial succeeded. */
  stopped?: string;
  decision: ArmDecision;
  /** Throughput ratio arm / baseline over pairs, at the look that decided (a repeated CI: it covers at any look). */
  ratio: LogInterval | null;
  memoryDecision: MemoryDecision;
  memoryRatio: LogInterval | null;
  /** Rounds measured when the arm was decided or the stage ended; the alpha of that look. */
  decidedAt: number | null;
  lookAlpha: number | null;
}

export interface CompareRun {
  arms: CompareArm[];
  /** Rounds in which every running arm got its trial. */
  rounds: number;
  trials: number;
  trialSeconds: number;
  budgetExhausted: boolean;
  notes: StageNote[];
}

function rate(t: ArmTrial): number | null {
  return t.outcome === 'ok' ? ratioThroughput(t.steps) : null;
}

/** Values of the arm and of the baseline from the rounds where both ran successfully. */
function pairs(arm: CompareArm, base: CompareArm, value: (t: ArmTrial) => number | null | undefined): number[] {
  const byRound = new Map(base.trials.map((t) => [t.round, value(t)]));
  const out: number[] = [];
  for (const t of arm.trials) {
    const a = value(t);
    const b = byRound.get(t.round);
    if (a != null && b != null && a > 0 && b > 0) out.push(a / b);
  }
  return out;
}

function decide(
  ci: LogInterval | null,
  band: number,
  up: ArmDecision | MemoryDecision,
  down: ArmDecision | MemoryDecision,
  above = band,
): ArmDecision | MemoryDecision {
  if (!ci) return 'undecided';
  if (ci.low > 1 + above) return up;
  if (ci.high < 1 - band) return down;
  if (ci.low >= 1 - band && ci.high <= 1 + above) return 'equivalent';
  return 'undecided';
}

/**
 * Runs the rounds. An arm whose first trials fail without a single success (say, OOM) is not run
 * again: repeating a deterministic failure costs time and adds nothing. A failure after successes
 * is recorded (its round has no pair) and the arm keeps running.
 */
export async function runCompare(run: ArmTrialFn, opts: CompareOptions): Promise<CompareRun> {
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  const baseIndex = opts.baseline ?? 0;
  const arms: CompareArm[] = opts.arms.map((config, i) => ({
    key: opts.keyOf(config),
    config,
    baseline: i === baseIndex,
    trials: [],
    decision: 'undecided',
    ratio: null,
    memoryDecision: 'undecided',
    memoryRatio: null,
    decidedAt: null,
    lookAlpha: null,
  }));
  const base = arms[baseIndex]!;
  const others = arms.filter((a) => !a.baseline);
  const share = alpha / Math.max(1, others.length);
  const schedule = new LookSchedule(opts.minRounds, opts.maxRounds, share);
  const notes: StageNote[] = [];
  let trials = 0;
  let trialSeconds = 0;
  let rounds = 0;
  let budgetExhausted = false;
  const overBudget = (): boolean =>
    (opts.budget.trials !== undefined && trials >= opts.budget.trials) ||
    (opts.budget.seconds !== undefined && trialSeconds >= opts.budget.seconds);
  const live = () => others.filter((a) => !a.stopped && a.decidedAt === null);

  const look = (n: number, lookAlpha: number, final: boolean): void => {
    for (const arm of live()) {
      const ratio = pairedRatioInterval(pairs(arm, base, rate), lookAlpha);
      const decision = decide(ratio, opts.noiseBand, 'faster', 'slower', opts.noiseBandAbove) as ArmDecision;
      arm.ratio = ratio;
      arm.memoryRatio = pairedRatioInterval(
        pairs(arm, base, (t) => (t.outcome === 'ok' ? t.memory : null)),
        lookAlpha,
      );
      arm.memoryDecision = decide(arm.memoryRatio, opts.noiseBand, 'more memory', 'less memory') as MemoryDecision;
      arm.decision = decision;
      arm.lookAlpha = lookAlpha;
      if (decision !== 'undecided' || final) arm.decidedAt = n;
    }
  };

  for (let round = 0; round < opts.maxRounds; round++) {
    if (base.stopped || live().length === 0) break;
    const running = [base, ...live()];
    const order = round % 2 === 0 ? running : [...running].reverse();
    const room = opts.budget.trials !== undefined ? Math.max(0, opts.budget.trials - trials) : order.length;
    await opts.plan?.(order.slice(0, room).map((arm) => ({ config: arm.config, opts: { role: 'compare', round } })));
    let complete = true;
    for (const arm of order) {
      if (overBudget()) {
        budgetExhausted = true;
        complete = false;
        break;
      }
      const t = await run(arm.config, { role: 'compare', round });
      trials += 1;
      trialSeconds += t.wallSeconds;
      arm.trials.push({ ...t, round });
      if (t.outcome !== 'ok' && !arm.trials.some((x) => x.outcome === 'ok')) {
        arm.stopped = `${t.outcome}: ${t.reason}`;
        notes.push({ kind: 'arm-failed-early', arm: arm.baseline ? null : arm.key, outcome: t.outcome });
      }
    }
    if (!complete) break;
    rounds += 1;
    const planned = schedule.take(rounds);
    if (planned !== null) look(rounds, planned, rounds === opts.maxRounds);
  }
  // Stopped between planned looks (budget, or a failed baseline): one last look spends what is left.
  const left = live().length > 0 ? schedule.leftover(rounds) : null;
  if (left !== null) look(rounds, left, true);
  for (const arm of live()) arm.decidedAt = rounds;
  if (budgetExhausted) notes.push({ kind: 'budget-ran-out', trials, trial_seconds: trialSeconds, rounds });
  return { arms, rounds, trials, trialSeconds, budgetExhausted, notes };
}
