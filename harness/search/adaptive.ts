// Sequential pairs: interleaved pairs of two configs (A B, B A, A B, ... so that neither side
// always runs second) are added until a planned look decides, or the budget ends. Looks happen only
// at the sample sizes of a group-sequential plan (stats/sequential.ts), each with its share of
// alpha, so that looking often does not inflate the error rate. The claim stage and the calibration
// benchmark both run through `runPairs`.
import { LookSchedule } from '../stats/sequential.js';

export interface PairBudget {
  /** Pairs before the first look. */
  minPairs: number;
  maxPairs: number;
  /** Two-sided error rate spent over all looks (default 0.05). */
  alpha?: number;
  /** Checked before each pair; true ends the loop (e.g. a trial or time budget). */
  overBudget?: () => boolean;
  /** The trials about to run, in order (up to the next look), for job arrays. */
  plan?: (trials: { side: 'a' | 'b'; pair: number }[]) => Promise<void>;
}

export interface PairLook {
  /** Pairs measured. */
  n: number;
  /** Alpha spent at this look. */
  alpha: number;
  /** The last look: the budget or max_pairs ended the run; it spends all alpha left. */
  final: boolean;
}

export interface PairsOutcome<T> {
  /** The last look's result (null when no look happened). */
  last: T | null;
  pairs: number;
  stoppedBy: 'decided' | 'max-pairs' | 'budget' | 'failed';
  /** Looks taken. */
  looks: number;
}

/** Which side runs first in a pair: A B, then B A, and so on. */
export function pairOrder(pair: number): readonly ['a', 'b'] | readonly ['b', 'a'] {
  return pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const);
}

/**
 * Runs pairs; `run` returns false when a trial failed (the loop stops). At each planned look,
 * `look` inspects the results at that look's alpha and says whether they decide.
 */
export async function runPairs<T>(
  run: (side: 'a' | 'b', pair: number) => Promise<boolean>,
  look: (l: PairLook) => { result: T; decided: boolean },
  budget: PairBudget,
): Promise<PairsOutcome<T>> {
  const schedule = new LookSchedule(budget.minPairs, budget.maxPairs, budget.alpha);
  let last: T | null = null;
  let looks = 0;
  const finalLook = (n: number): void => {
    // The budget ended between planned looks: one more look spends what is left.
    const alpha = schedule.leftover(n);
    if (alpha === null) return;
    last = look({ n, alpha, final: true }).result;
    looks += 1;
  };
  let nextPlanned = 0;
  for (let pair = 0; pair < budget.maxPairs; pair++) {
    if (budget.overBudget?.()) {
      finalLook(pair);
      return { last, pairs: pair, stoppedBy: 'budget', looks };
    }
    if (budget.plan && pair >= nextPlanned) {
      const upto = schedule.after(pair);
      const planned: { side: 'a' | 'b'; pair: number }[] = [];
      for (let p = pair; p < upto; p++) for (const side of pairOrder(p)) planned.push({ side, pair: p });
      await budget.plan(planned);
      nextPlanned = upto;
    }
    for (const side of pairOrder(pair)) {
      if (!(await run(side, pair))) return { last, pairs: pair, stoppedBy: 'failed', looks };
    }
    const n = pair + 1;
    const alpha = schedule.take(n);
    if (alpha === null) continue;
    const l = look({ n, alpha, final: n === budget.maxPairs });
    looks += 1;
    last = l.result;
    if (l.decided) return { last, pairs: n, stoppedBy: 'decided', looks };
  }
  return { last, pairs: budget.maxPairs, stoppedBy: 'max-pairs', looks };
}
