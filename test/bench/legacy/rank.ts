// Frozen copy of harness/search/rank.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Ranking configurations by throughput CI; ties (overlapping CIs) go to the cheaper configuration.
import type { Interval } from './bootstrap.js';
import { ratioInterval } from './throughput.js';
import { cheaper } from '../../../harness/search/rank.js';
import type { Config, StepSample } from './types.js';

export interface Arm {
  key: string;
  config: Config;
  ci: Interval | null;
  /** Timed steps of each ok trial; with them, ties are judged on the CI of the ratio to the leader. */
  trials?: readonly (readonly StepSample[])[];
}

export interface Ranking {
  /** Arms with a CI, best estimate first. */
  order: Arm[];
  leader: Arm | undefined;
  /** Arms not significantly different from the leader (their CIs overlap), leader included. */
  tied: Arm[];
  /** The cheapest of the tied arms. */
  chosen: Arm | undefined;
  note: string | undefined;
}

export { cheaper };

/**
 * An arm ties with the leader when the 95% CI of its throughput ratio to the leader reaches 1
 * (no significant difference); without raw trials, when the two CIs overlap.
 */
export function rank(arms: readonly Arm[], costOrder: readonly string[], seed = 1): Ranking {
  const order = arms.filter((a) => a.ci !== null).sort((a, b) => b.ci!.estimate - a.ci!.estimate);
  const leader = order[0];
  if (!leader) return { order, leader, tied: [], chosen: undefined, note: undefined };
  const tiesLeader = (a: Arm): boolean => {
    if (a === leader) return true;
    if (a.trials && leader.trials) {
      const ratio = ratioInterval(leader.trials, a.trials, { seed, resamples: 4000 });
      if (ratio) return ratio.high >= 1;
    }
    return a.ci!.high >= leader.ci!.low;
  };
  const tied = order.filter(tiesLeader);
  const chosen = [...tied].sort((a, b) => cheaper(a.config, b.config, costOrder))[0]!;
  let note: string | undefined;
  if (tied.length > 1 && chosen !== leader) {
    note = `${tied.length} configs are not significantly different from the best (${leader.key}); chose the cheapest, ${chosen.key}`;
  } else if (tied.length > 1) {
    note = `${tied.length} configs are not significantly different; the best (${leader.key}) is also the cheapest`;
  } else {
    note = `${leader.key} is significantly better than every other config (95% CI of each ratio to it below 1)`;
  }
  return { order, leader, tied, chosen, note };
}
