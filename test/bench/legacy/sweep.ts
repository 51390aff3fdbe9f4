// Frozen copy of harness/search/sweep.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Sweep strategies over a trial function: `grid` runs every config `repeats` times, interleaved;
// `race` runs every config briefly, drops the clearly worse, and repeats the survivors
// (in the spirit of F-race, Birattari et al. 2002, and successive halving, Jamieson & Talwalkar 2016).
import { throughputInterval } from './throughput.js';
import type { Interval } from './bootstrap.js';
import type { Config, Outcome, StepSample } from './types.js';
import { rank, type Ranking } from './rank.js';

export interface ArmTrial {
  outcome: Outcome;
  reason: string;
  steps: StepSample[];
  wallSeconds: number;
}

export type ArmTrialFn = (config: Config, opts: { steps?: number; role: string; round: number }) => Promise<ArmTrial>;
/** The trials a round will run, in order, announced before the first of them runs (for job arrays). */
export type ArmPlanFn = (
  trials: { config: Config; opts: { steps?: number; role: string; round: number } }[],
) => Promise<void>;

export interface SweepOptions {
  strategy: 'grid' | 'race';
  configs: readonly Config[];
  keyOf: (config: Config) => string;
  /** grid: trials per config; race: the most trials a config can get. */
  repeats: number;
  budget: { trials?: number; seconds?: number };
  costOrder: readonly string[];
  seed: number;
  /** Steps of race's first, brief round (later rounds use the stage's steps). */
  briefSteps: number;
  plan?: ArmPlanFn;
}

export type ArmStatus = 'finished' | 'eliminated' | 'failed' | 'unfinished';

export interface ArmState {
  key: string;
  config: Config;
  trials: (ArmTrial & { brief: boolean })[];
  status: ArmStatus;
  /** Why it stopped early: the failing trial's reason, or the elimination. */
  why?: string;
  ci: Interval | null;
}

export interface SweepResult {
  arms: ArmState[];
  ranking: Ranking;
  trials: number;
  trialSeconds: number;
  budgetExhausted: boolean;
  notes: string[];
}

export async function runSweep(run: ArmTrialFn, opts: SweepOptions): Promise<SweepResult> {
  const arms: ArmState[] = opts.configs.map((config) => ({
    key: opts.keyOf(config),
    config,
    trials: [],
    status: 'unfinished',
    ci: null,
  }));
  const notes: string[] = [];
  let trials = 0;
  let trialSeconds = 0;
  let budgetExhausted = false;
  const overBudget = (): boolean =>
    (opts.budget.trials !== undefined && trials >= opts.budget.trials) ||
    (opts.budget.seconds !== undefined && trialSeconds >= opts.budget.seconds);
  // Brief trials decide eliminations only; once an arm has full-length trials, its CI rests on them,
  // because a short trial over-weights the batches prefetched during warm-up.
  const measured = (arm: ArmState): StepSample[][] => {
    const ok = arm.trials.filter((t) => t.outcome === 'ok');
    const full = ok.filter((t) => !t.brief);
    return (full.length > 0 ? full : ok).map((t) => t.steps);
  };
  const refresh = (arm: ArmState): void => {
    arm.ci = throughputInterval(measured(arm), { seed: opts.seed });
  };
  const runArm = async (arm: ArmState, round: number, steps?: number): Promise<boolean> => {
    if (overBudget()) {
      budgetExhausted = true;
      return false;
    }
    const t = await run(arm.config, {
      ...(steps !== undefined ? { steps } : {}),
      role: steps !== undefined ? 'race-brief' : opts.strategy,
      round,
    });
    trials += 1;
    trialSeconds += t.wallSeconds;
    arm.trials.push({ ...t, brief: steps !== undefined });
    if (t.outcome !== 'ok') {
      arm.status = 'failed';
      arm.why = `${t.outcome}: ${t.reason}`;
    }
    refresh(arm);
    return true;
  };
  const live = (): ArmState[] => arms.filter((a) => a.status === 'unfinished');

  for (let round = 0; round < opts.repeats && live().length > 0; round++) {
    // Rotate the order each round so that drift does not favour the configs that run first.
    const order = live();
    const rotated = [...order.slice(round % order.length), ...order.slice(0, round % order.length)];
    const brief = opts.strategy === 'race' && round === 0 && opts.repeats > 1 ? opts.briefSteps : undefined;
    const room = opts.budget.trials !== undefined ? Math.max(0, opts.budget.trials - trials) : rotated.length;
    const role = brief !== undefined ? 'race-brief' : opts.strategy;
    await opts.plan?.(
      rotated.slice(0, room).map((arm) => ({
        config: arm.config,
        opts: { ...(brief !== undefined ? { steps: brief } : {}), role, round },
      })),
    );
    for (const arm of rotated) if (!(await runArm(arm, round, brief))) break;
    if (budgetExhausted) break;
    if (opts.strategy === 'race') {
      const alive = live().filter((a) => a.ci !== null);
      const leader = alive.sort((a, b) => b.ci!.estimate - a.ci!.estimate)[0];
      for (const arm of alive) {
        if (leader && arm !== leader && arm.ci!.high < leader.ci!.low) {
          arm.status = 'eliminated';
          arm.why = `eliminated after round ${round + 1}: CI upper ${arm.ci!.high.toFixed(1)} < leader ${leader.key} lower ${leader.ci!.low.toFixed(1)} samples/s`;
        }
      }
      if (live().length <= 1) break;
    }
  }
  for (const arm of live()) if (arm.trials.length > 0) arm.status = 'finished';
  if (budgetExhausted)
    notes.push(`the budget ran out after ${trials} trials (${trialSeconds.toFixed(1)} trial-seconds)`);
  const contenders = arms.filter((a) => a.status !== 'eliminated' && a.status !== 'failed' && a.ci !== null);
  const ranking = rank(
    contenders.map((a) => ({ key: a.key, config: a.config, ci: a.ci, trials: measured(a) })),
    opts.costOrder,
    opts.seed,
  );
  if (ranking.note) notes.push(ranking.note);
  return { arms, ranking, trials, trialSeconds, budgetExhausted, notes };
}
