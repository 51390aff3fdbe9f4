// Sweep strategies over a trial function. `grid` runs every config `repeats` times, in rounds
// (rotated each round so drift favours no one). `race`, in the spirit of F-race (Birattari et al.
// 2002), runs full-length rounds of every surviving config and, from `minRounds` on, at the planned
// looks of a group-sequential plan, eliminates a config only when a round-blocked test
// (stats/blocked.ts) finds it slower than the leader, with a Bonferroni bound over all k(k - 1)/2
// pairs of configs and alpha spent over the looks: the chance that any "significantly slower" is
// wrong stays <= alpha, even when every config is the same.
// It stops when one config is left, when the survivors are equivalent within the noise band, or at
// `repeats` rounds. Configs that cannot be separated from the leader are "tied"; the cheapest of
// those shown to be within the noise band of the leader is chosen, else the leader.
import { blockedDifference, blockedLayout, pairCount } from '../stats/blocked.js';
import { logMeanInterval, MIN_TRIALS_FOR_CI, pooledLogMeanInterval } from '../stats/log-ratio.js';
import { DEFAULT_ALPHA, LookSchedule } from '../stats/sequential.js';
import { ratioThroughput } from '../stats/throughput.js';
import { cheaper, type Ranking } from './rank.js';
import type { Config, LogInterval, Outcome, RoleKind, StageNote, StepSample } from '../domain/index.js';

export interface ArmTrial {
  outcome: Outcome;
  reason: string;
  steps: StepSample[];
  wallSeconds: number;
  /** Peak memory in bytes (device, else RSS), when measured. */
  memory?: number | null;
}

export type ArmTrialFn = (config: Config, opts: { steps?: number; role: RoleKind; round: number }) => Promise<ArmTrial>;
/** The trials a round will run, in order, announced before the first of them runs (for job arrays). */
export type ArmPlanFn = (
  trials: { config: Config; opts: { steps?: number; role: RoleKind; round: number } }[],
) => Promise<void>;

/** Race: full rounds before the first elimination; fewer trials say too little about a config. */
export const RACE_MIN_ROUNDS = 3;

export interface SweepOptions {
  strategy: 'grid' | 'race';
  configs: readonly Config[];
  keyOf: (config: Config) => string;
  /** grid: rounds (trials per config); race: the most rounds. */
  repeats: number;
  /** race: rounds before the first look (at least RACE_MIN_ROUNDS). */
  minRounds?: number;
  /** race stops when every survivor is within this fraction of the leader (default 0.02). */
  noiseBand?: number;
  /** Family-wise error rate of every elimination and "slower" statement, over all looks (default 0.05). */
  alpha?: number;
  budget: { trials?: number; seconds?: number };
  costOrder: readonly string[];
  /**
   * Parameters that do nothing on this device (pin_memory without a GPU): their values measure the same
   * work, so a config with one of them on is never chosen over its twin with it off (false).
   */
  inert?: readonly string[];
  plan?: ArmPlanFn;
  /** Configs of the stage that the constraints pruned before the sweep, for the ranking's note. */
  pruned?: number;
}

export type ArmStatus = 'finished' | 'eliminated' | 'failed' | 'unfinished';

export interface ArmState {
  key: string;
  config: Config;
  trials: (ArmTrial & { round: number })[];
  status: ArmStatus;
  /** Why it stopped early: the failing trial's reason, or the elimination. */
  why?: string;
  /** 95% CI of the config's throughput (geometric mean over trials); null with too few trials. */
  ci: LogInterval | null;
}

export interface SweepResult {
  arms: ArmState[];
  ranking: Ranking;
  rounds: number;
  trials: number;
  trialSeconds: number;
  budgetExhausted: boolean;
  notes: StageNote[];
}

interface Analysis {
  n: number;
  alpha: number;
  /** Configs significantly slower than the leader at this look. */
  slower: Map<ArmState, string>;
  /** Configs shown to be within the noise band of the leader (the lower end of their ratio CI). */
  within: Set<ArmState>;
  leader: ArmState;
  equivalent: boolean;
}

const pct = (r: number) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`;

export async function runSweep(run: ArmTrialFn, opts: SweepOptions): Promise<SweepResult> {
  const sweep = startSweep(opts);
  for (let round = 0; round < opts.repeats; round++) {
    if (!(await runRound(sweep, run, round))) break;
  }
  return finishSweep(sweep);
}

/** What a sweep knows between rounds; changed only by the functions of this file. */
interface SweepState {
  opts: SweepOptions;
  arms: ArmState[];
  race: boolean;
  band: number;
  /** Pairs of configs, for the Bonferroni bound. */
  comparisons: number;
  schedule: LookSchedule;
  notes: StageNote[];
  trials: number;
  trialSeconds: number;
  /** Complete rounds. */
  rounds: number;
  budgetExhausted: boolean;
  /** The latest look that could be analysed. */
  last: Analysis | null;
}

function startSweep(opts: SweepOptions): SweepState {
  const arms: ArmState[] = opts.configs.map((config) => ({
    key: opts.keyOf(config),
    config,
    trials: [],
    status: 'unfinished',
    ci: null,
  }));
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  const race = opts.strategy === 'race';
  const first = race
    ? Math.min(Math.max(opts.minRounds ?? RACE_MIN_ROUNDS, RACE_MIN_ROUNDS), opts.repeats)
    : opts.repeats;
  return {
    opts,
    arms,
    race,
    band: opts.noiseBand ?? 0.02,
    comparisons: pairCount(arms.length),
    schedule: new LookSchedule(first, opts.repeats, alpha),
    notes: [],
    trials: 0,
    trialSeconds: 0,
    rounds: 0,
    budgetExhausted: false,
    last: null,
  };
}

const live = (s: SweepState): ArmState[] => s.arms.filter((a) => a.status === 'unfinished');

const overBudget = (s: SweepState): boolean =>
  (s.opts.budget.trials !== undefined && s.trials >= s.opts.budget.trials) ||
  (s.opts.budget.seconds !== undefined && s.trialSeconds >= s.opts.budget.seconds);

/** Runs round `round` and, at a planned look, analyses it; false when the sweep is over. */
async function runRound(s: SweepState, run: ArmTrialFn, round: number): Promise<boolean> {
  const running = live(s);
  if (running.length === 0 || (s.race && round > 0 && running.length <= 1)) return false;
  await runRoundTrials(s, run, { running, round });
  if (s.budgetExhausted) return false;
  s.rounds += 1;
  const planned = s.schedule.take(s.rounds);
  if (planned === null) return true;
  s.last = analyse(s, planned) ?? s.last;
  if (s.race && s.last && s.last.n === s.rounds) return raceLook(s, s.last);
  return true;
}

/** One trial of each running config, rotated by the round, until the budget runs out. */
async function runRoundTrials(
  s: SweepState,
  run: ArmTrialFn,
  { running, round }: { running: ArmState[]; round: number },
): Promise<void> {
  const { opts } = s;
  const order = [...running.slice(round % running.length), ...running.slice(0, round % running.length)];
  const room = opts.budget.trials !== undefined ? Math.max(0, opts.budget.trials - s.trials) : order.length;
  await opts.plan?.(order.slice(0, room).map((arm) => ({ config: arm.config, opts: { role: opts.strategy, round } })));
  for (const arm of order) {
    if (overBudget(s)) {
      s.budgetExhausted = true;
      break;
    }
    const t = await run(arm.config, { role: opts.strategy, round });
    s.trials += 1;
    s.trialSeconds += t.wallSeconds;
    arm.trials.push({ ...t, round });
    if (t.outcome !== 'ok') {
      arm.status = 'failed';
      arm.why = `${t.outcome}: ${t.reason}`;
    }
  }
}

/** Race: eliminates the configs this look found slower; false when the race is over. */
function raceLook(s: SweepState, look: Analysis): boolean {
  for (const [arm, why] of look.slower) {
    arm.status = 'eliminated';
    arm.why = `eliminated: ${why}`;
  }
  if (live(s).length <= 1) return false;
  if (look.equivalent) {
    s.notes.push({ kind: 'race-stopped', rounds: s.rounds, left: live(s).length, band: s.band });
    return false;
  }
  return true;
}

/** The round-blocked test over the live configs and the complete rounds so far. */
function analyse(s: SweepState, lookAlpha: number): Analysis | null {
  const { rounds, comparisons } = s;
  const alive = live(s).filter((a) => a.trials.length >= rounds);
  const y = alive.map((a) =>
    a.trials.filter((t) => t.round < rounds).map((t) => Math.log(ratioThroughput(t.steps) ?? NaN)),
  );
  if (y.some((r) => r.some((v) => !Number.isFinite(v)))) return null;
  const layout = blockedLayout(y);
  if (!layout) return null;
  const leaderIndex = layout.means.indexOf(Math.max(...layout.means));
  const leader = alive[leaderIndex]!;
  // Two-sided per pair (either config of a pair could lead), Bonferroni over the pairs.
  const perTest = lookAlpha / (2 * comparisons);
  const slower = new Map<ArmState, string>();
  const within = new Set<ArmState>([leader]);
  let equivalent = true;
  alive.forEach((arm, i) => {
    if (i === leaderIndex) return;
    const d = blockedDifference(layout, i, leaderIndex, lookAlpha / comparisons);
    if (d.pSlower < perTest) {
      slower.set(
        arm,
        `${pct(d.ratio)} [${pct(d.low)}, ${pct(d.high)}] against ${leader.key} after ${rounds} rounds ` +
          `(round-blocked t test, p = ${d.pSlower.toPrecision(2)} < ${perTest.toPrecision(2)}: ` +
          `alpha ${lookAlpha.toPrecision(2)} over ${comparisons} pairs)`,
      );
    }
    if (d.low < 1 - s.band) equivalent = false;
    else within.add(arm);
  });
  return { n: rounds, alpha: lookAlpha, slower, within, leader, equivalent };
}

/** The last look with the alpha left over, the CIs, the ranking and the notes. */
function finishSweep(s: SweepState): SweepResult {
  const { arms, notes, opts } = s;
  const left = live(s).length > 1 ? s.schedule.leftover(s.rounds) : null;
  if (left !== null) s.last = analyse(s, left) ?? s.last;
  for (const arm of live(s)) if (arm.trials.length > 0) arm.status = 'finished';
  if (s.budgetExhausted)
    notes.push({ kind: 'budget-ran-out', trials: s.trials, trial_seconds: s.trialSeconds, rounds: s.rounds });
  setIntervals(arms, notes);
  const ranking = withInertOff(
    rankArms(arms, s.last, opts.costOrder, s.race, s.comparisons, s.band, opts.pruned ?? 0),
    arms,
    opts.inert ?? [],
  );
  const { rounds, trials, trialSeconds, budgetExhausted } = s;
  return { arms, ranking, rounds, trials, trialSeconds, budgetExhausted, notes };
}

function okRates(arm: ArmState): number[] {
  return arm.trials
    .filter((t) => t.outcome === 'ok')
    .map((t) => ratioThroughput(t.steps))
    .filter((r): r is number => r !== null && r > 0 && Number.isFinite(r));
}

/**
 * Each config's 95% CI from its own trials when it has at least MIN_TRIALS_FOR_CI; otherwise from
 * its trials with the between-trial spread pooled over the configs of the stage, and a note says so.
 */
function setIntervals(arms: ArmState[], notes: StageNote[]): void {
  let ss = 0;
  let df = 0;
  for (const arm of arms) {
    const logs = okRates(arm).map(Math.log);
    if (logs.length < 2) continue;
    const m = logs.reduce((a, b) => a + b, 0) / logs.length;
    ss += logs.reduce((a, b) => a + (b - m) ** 2, 0);
    df += logs.length - 1;
  }
  let pooled = 0;
  for (const arm of arms) {
    const rates = okRates(arm);
    if (rates.length >= MIN_TRIALS_FOR_CI) arm.ci = logMeanInterval(rates, 0.05);
    else if (rates.length > 0 && df >= 1) {
      arm.ci = pooledLogMeanInterval(rates, Math.sqrt(ss / df), df, 0.05);
      pooled += 1;
    } else arm.ci = null;
  }
  if (pooled > 0) notes.push({ kind: 'pooled-intervals', configs: pooled, min_trials: MIN_TRIALS_FOR_CI, df });
}

function rankArms(
  arms: ArmState[],
  last: Analysis | null,
  costOrder: readonly string[],
  race: boolean,
  comparisons: number,
  band: number,
  pruned: number,
): Ranking {
  const contenders = arms.filter((a) => a.status !== 'failed' && a.status !== 'eliminated' && okRates(a).length > 0);
  const order = [...arms.filter((a) => a.ci !== null)].sort((a, b) => b.ci!.estimate - a.ci!.estimate);
  // The geometric mean of the trials orders configs even where there is no CI (one round).
  const level = (a: ArmState) =>
    Math.exp(okRates(a).reduce((x, r) => x + Math.log(r), 0) / Math.max(1, okRates(a).length));
  const best = [...contenders].sort((a, b) => level(b) - level(a))[0];
  if (!best) return { order, leader: undefined, tied: [], chosen: undefined, note: undefined };
  if (contenders.length === 1) {
    const others = arms.length - 1;
    // Nothing was compared, so the note must not read like a comparison won.
    const note =
      others === 0
        ? pruned > 0
          ? `${best.key} is the only config left after pruning ` +
            `(${pruned === 1 ? '1 config was' : `${pruned} configs were`} pruned by the constraints); ` +
            'there was nothing to compare it with'
          : `${best.key} is the only config that ran; there was nothing to compare it with`
        : race
          ? `${best.key} is the only config left: ` +
            `each of the ${others} others failed or was eliminated as significantly slower`
          : `${best.key} is the only config with a successful trial`;
    return { order, leader: best, tied: [best], chosen: best, note };
  }
  if (!last) {
    const note =
      'configs cannot be told apart with one round of trials: ' +
      `${best.key} has the best estimate, not a significant lead; run more repeats`;
    return { order, leader: best, tied: contenders, chosen: best, note };
  }
  const leader = contenders.includes(last.leader) ? last.leader : best;
  const tied = contenders.filter((a) => !last.slower.has(a));
  // Ties go to the cheapest config (by cost) whose estimate is within the noise band of the leader's: none of
  // them is shown slower, and none is estimated slower by more than the band (a config 5% behind that noise
  // hides is not given the win for being cheaper). The note says whether the data also show it within the band.
  const estimate = (a: ArmState) => a.ci?.estimate ?? level(a);
  const close = tied.filter((a) => a === leader || estimate(a) >= estimate(leader) * (1 - band));
  const chosen = [...close].sort((a, b) => cheaper(a.config, b.config, costOrder))[0]!;
  const band$ = `${(band * 100).toFixed(1)}%`;
  let note: string;
  if (tied.length === 1) {
    note =
      `${chosen.key} is significantly faster than each of the ${contenders.length - 1} ` +
      `other configs (round-blocked t tests, Bonferroni over ${comparisons} pairs)`;
  } else if (chosen === leader) {
    note =
      `${leader.key} has the best estimate, tied with ${tied.length - 1} other(s) that are not significantly slower; ` +
      (close.length > 1
        ? `it is also the cheapest of those estimated within ${band$} of it`
        : `the others are estimated more than ${band$} slower, so the leader is kept`);
  } else if (last.within.has(chosen)) {
    note =
      `${leader.key} has the best estimate, tied with ${tied.length - 1} other(s) that are not significantly slower; ` +
      `chose the cheapest, ${chosen.key}, shown to be within ${band$} of it`;
  } else {
    note =
      `${leader.key} has the best estimate, tied with ${tied.length - 1} other(s) that are not significantly slower; ` +
      `chose the cheapest whose estimate is within ${band$} of it, ${chosen.key}: not shown slower, but not shown ` +
      'to be within the band either (more rounds would tell whether the saving costs speed)';
  }
  return { order, leader, tied, chosen, note };
}

/**
 * A chosen config with an inert parameter on (pin_memory=true without a GPU) gives way to its twin with it
 * off, when the twin ran and did not fail: the two measured the same work, so the cheaper one is chosen.
 */
function withInertOff(r: Ranking, arms: readonly ArmState[], inert: readonly string[]): Ranking {
  const c = r.chosen;
  if (!c) return r;
  const on = inert.filter((p) => c.config[p] === true);
  if (on.length === 0) return r;
  const twin = arms.find(
    (a) =>
      a !== c &&
      a.status !== 'failed' &&
      on.every((p) => a.config[p] === false) &&
      Object.keys(c.config).every((k) => on.includes(k) || a.config[k] === c.config[k]),
  );
  if (!twin) return r;
  const note =
    `${r.note ? `${r.note}; ` : ''}${on.join(', ')} does nothing on this device, so ${twin.key} (off) is chosen ` +
    `over ${c.key}: they measured the same work`;
  return { ...r, chosen: twin, note };
}
