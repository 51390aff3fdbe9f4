// A simulated history for the bisection: commits whose trials have lognormal throughput noise at a
// given CV, with a planted step (every commit from the culprit on is slower by `step`). The shipped
// code decides every step: runBisect over compareOracle, which runs runCompare on these trials.
// A plain bisection that trusts one run of each side is the point of comparison.
import { compareOracle, COMMIT_PARAMETER } from '../../harness/search/bisect-step.js';
import { nextIndex, runBisect, type BisectResult } from '../../harness/search/bisect.js';
import type { ArmTrial, ArmTrialFn } from '../../harness/search/sweep.js';
import { createRng } from '../../harness/stats/rng.js';
import { gaussian } from './noise-sim.js';

/** The compare stage's defaults (repeats 5, max_rounds 20, noise_band 2%); a repeat goes to 40 rounds. */
export const BISECT = { minRounds: 5, maxRounds: 20, extendedMaxRounds: 40, noiseBand: 0.02 };

export interface History {
  /** The commits after good, oldest first; the last is bad. */
  commits: string[];
  /** Index of the first slower commit, or null when none is. */
  culprit: number | null;
  /** 0.1: from the culprit on, each run takes 10% longer. */
  step: number;
  /** Coefficient of variation of a run's time (lognormal). */
  cv: number;
  /** Commits whose runs crash (a failed run is a skipped step). */
  broken?: ReadonlySet<number>;
}

export const GOOD = 'good';

export function history(n: number, h: Omit<History, 'commits'>): History {
  return { commits: Array.from({ length: n }, (_, i) => `c${String(i).padStart(2, '0')}`), ...h };
}

/** One run of `commit`: its time, lognormal around 1 s (or 1 + step past the culprit). */
export function runTime(h: History, rng: () => number): (commit: string) => number | null {
  const z = gaussian(rng);
  const sigma = Math.sqrt(Math.log(1 + h.cv * h.cv));
  return (commit) => {
    const i = commit === GOOD ? -1 : h.commits.indexOf(commit);
    if (h.broken?.has(i)) return null;
    const slow = h.culprit !== null && i >= h.culprit ? 1 + h.step : 1;
    return slow * Math.exp(sigma * z() - (sigma * sigma) / 2);
  };
}

/** The trial function the compare oracle runs: a run's time as one step of one sample. */
export function simTrials(h: History, seed: number): { run: ArmTrialFn; count: () => number } {
  const time = runTime(h, createRng(seed));
  let count = 0;
  const run: ArmTrialFn = async (config) => {
    count += 1;
    const t = time(String(config[COMMIT_PARAMETER]));
    const trial: ArmTrial =
      t === null
        ? { outcome: 'crash', reason: 'exit status 1', steps: [], wallSeconds: 0.1 }
        : { outcome: 'ok', reason: 'ok', steps: [{ samples: 1, seconds: t }], wallSeconds: t };
    return trial;
  };
  return { run, count: () => count };
}

/** runBisect through compareOracle on a simulated history. */
export async function simulatedBisect(h: History, seed: number): Promise<BisectResult & { trials: number }> {
  const { run, count } = simTrials(h, seed);
  const r = await runBisect(h.commits, compareOracle({ run, good: GOOD, ...BISECT }));
  return { ...r, trials: count() };
}

/**
 * A plain bisection as `git bisect run` with a careful timing script does it: good and bad are trusted
 * and each timed once to set a threshold halfway between them; each step then times the tested commit
 * once and calls it slower when it took longer than the threshold. (Comparing each commit with one new
 * run of good instead, slower when longer, calls a commit that is the same slower half the time.)
 */
export function plainBisect(h: History, seed: number): { culprit: number; steps: number } {
  const time = runTime(h, createRng(seed));
  const good = time(GOOD);
  const bad = time(h.commits.at(-1)!);
  const threshold = good !== null && bad !== null ? (good + bad) / 2 : Number.POSITIVE_INFINITY;
  let lastSame = -1;
  let firstSlower = h.commits.length - 1;
  let steps = 1;
  const skipped = new Map<number, true>();
  for (let i = nextIndex(lastSame, firstSlower, skipped); i !== null; i = nextIndex(lastSame, firstSlower, skipped)) {
    steps += 1;
    const t = time(h.commits[i]!);
    if (t === null) skipped.set(i, true);
    else if (t > threshold) firstSlower = i;
    else lastSame = i;
  }
  return { culprit: firstSlower, steps };
}
