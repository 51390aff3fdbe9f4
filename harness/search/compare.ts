// The compare strategy over a trial function: arms of one parameter, interleaved A B C A B C...
// so that drift (thermal, caches, neighbours) spreads over every arm instead of favouring one.
import type { Config } from '../trial/record.js';
import type { ArmPlanFn, ArmTrial, ArmTrialFn } from './sweep.js';

export interface CompareOptions {
  /** Each arm's config: the compared parameter's value (other values are fixed by the caller). */
  arms: readonly Config[];
  keyOf: (config: Config) => string;
  /** Rounds: every arm runs once per round. */
  repeats: number;
  budget: { trials?: number; seconds?: number };
  plan?: ArmPlanFn;
}

export interface CompareArm {
  key: string;
  config: Config;
  trials: ArmTrial[];
  /** Set when the arm stopped being run: it failed before any trial succeeded. */
  stopped?: string;
}

export interface CompareRun {
  arms: CompareArm[];
  /** Rounds in which every running arm got its trial. */
  rounds: number;
  trials: number;
  trialSeconds: number;
  budgetExhausted: boolean;
  notes: string[];
}

/**
 * Runs the arms round by round in a fixed order. An arm whose first trials fail without a single
 * success (say, OOM) is not run again: repeating a deterministic failure costs time and adds
 * nothing. A failure after successes is recorded and the arm keeps running.
 */
export async function runCompare(run: ArmTrialFn, opts: CompareOptions): Promise<CompareRun> {
  const arms: CompareArm[] = opts.arms.map((config) => ({ key: opts.keyOf(config), config, trials: [] }));
  const notes: string[] = [];
  let trials = 0;
  let trialSeconds = 0;
  let rounds = 0;
  let budgetExhausted = false;
  const overBudget = (): boolean =>
    (opts.budget.trials !== undefined && trials >= opts.budget.trials) || (opts.budget.seconds !== undefined && trialSeconds >= opts.budget.seconds);
  for (let round = 0; round < opts.repeats && !budgetExhausted; round++) {
    const running = arms.filter((a) => !a.stopped);
    if (running.length === 0) break;
    let complete = true;
    const room = opts.budget.trials !== undefined ? Math.max(0, opts.budget.trials - trials) : running.length;
    await opts.plan?.(running.slice(0, room).map((arm) => ({ config: arm.config, opts: { role: 'compare', round } })));
    for (const arm of running) {
      if (overBudget()) {
        budgetExhausted = true;
        complete = false;
        break;
      }
      const t = await run(arm.config, { role: 'compare', round });
      trials += 1;
      trialSeconds += t.wallSeconds;
      arm.trials.push(t);
      if (t.outcome !== 'ok' && !arm.trials.some((x) => x.outcome === 'ok')) {
        arm.stopped = `${t.outcome}: ${t.reason}`;
        notes.push(`arm ${arm.key} failed (${t.outcome}) before any successful trial; it is not run again`);
      }
    }
    if (complete) rounds += 1;
  }
  if (budgetExhausted) notes.push(`the budget ran out after ${trials} trials (${trialSeconds.toFixed(1)} trial-seconds, ${rounds} complete rounds)`);
  return { arms, rounds, trials, trialSeconds, budgetExhausted, notes };
}
