// Bisection for a performance regression, as pure code over a "measure this commit against the
// good one" function (git, builds and trials live with the caller). It first checks that the bad
// commit is slower at all, then halves the range; a commit that cannot be built or run is skipped
// like `git bisect skip`, and an undecided one is measured once more with a larger budget before it
// is set aside the same way. Every decision is a typed value; sentences are made where they are printed.
import type { Interval } from '../domain/index.js';

/** A step's answer: slower than the good commit, the same, undecided, or not measurable (build or run failed). */
export type StepVerdict = 'slower' | 'same' | 'undecided' | 'skipped';

/** Why a commit could not be measured. */
export interface StepFailure {
  phase: 'build' | 'run';
  /** Which side failed: the tested commit, or the good commit it is measured against. */
  side: 'commit' | 'good';
  /** The failing command's or trial's own words, for the report. */
  detail: string;
}

/** What the measure function returns for one commit. */
export interface Measurement {
  verdict: StepVerdict;
  /** Throughput of the commit over the good commit's (below 1: slower), with its CI; null without one. */
  ratio?: Interval | null;
  /** The per-round paired ratios (commit / good) the verdict rests on, in round order. */
  pairs?: readonly number[];
  /** Trials run for this measurement (both sides), and complete rounds. */
  trials?: number;
  rounds?: number;
  /** The band around 1 the verdict was taken with. */
  band?: number;
  failure?: StepFailure;
}

/** What the search asks for: the good/bad check or a bisection step, first try or the larger budget. */
export interface MeasureContext {
  purpose: 'check' | 'step';
  attempt: 1 | 2;
  /** The bad commit's ratio to the good one from the check (steps only: the size of the regression). */
  bad: Interval | null;
}

export type MeasureFn = (commit: string, context: MeasureContext) => Promise<Measurement>;

/** One call of the measure function, in the order taken. */
export interface BisectStep extends Measurement {
  commit: string;
  /** Position in the commit list (0: the first commit after good; the last: bad). */
  index: number;
  purpose: MeasureContext['purpose'];
  attempt: MeasureContext['attempt'];
}

/** A commit the search could not place on either side. */
export interface Untestable {
  commit: string;
  index: number;
  why: 'skipped' | 'undecided';
}

export type BisectOutcome =
  /** The first slower commit: its parent was measured the same (or is the good commit). */
  | { kind: 'culprit'; commit: string; index: number; ratio: Interval | null }
  /**
   * The culprit is one of `commits` (from the first after the last same commit to the first
   * slower one); the others in it could not be placed (`untestable`), or the step budget ran out.
   */
  | {
      kind: 'range';
      commits: string[];
      first: number;
      last: number;
      untestable: Untestable[];
      stopped: 'untestable' | 'step-budget';
      /** The ratio of the range's last (slower) commit. */
      ratio: Interval | null;
    }
  /** The bad commit is not measurably slower than the good one: nothing to bisect. */
  | { kind: 'no-culprit'; verdict: 'same' | 'undecided'; ratio: Interval | null }
  /** The bad commit (or the good one) could not be built or run. */
  | { kind: 'unmeasurable'; commit: string; failure: StepFailure | null };

export interface BisectResult {
  outcome: BisectOutcome;
  steps: BisectStep[];
  /** The bad commit's check (its last attempt). */
  check: BisectStep;
}

export interface BisectOptions {
  /** The most measure calls, check and repeats included (default: no limit). */
  maxSteps?: number;
}

/**
 * Bisects `commits`: the commits after good (exclusive) up to bad (inclusive), oldest first.
 * Assumes one regression: once a commit is slower, every later one is.
 */
export async function runBisect(
  commits: readonly string[],
  measure: MeasureFn,
  options: BisectOptions = {},
): Promise<BisectResult> {
  validateCommits(commits);
  const steps: BisectStep[] = [];
  const ask = async (index: number, purpose: MeasureContext['purpose'], bad: Interval | null): Promise<BisectStep> => {
    let step: BisectStep | null = null;
    for (const attempt of [1, 2] as const) {
      const commit = commits[index]!;
      step = { ...(await measure(commit, { purpose, attempt, bad })), commit, index, purpose, attempt };
      steps.push(step);
      if (step.verdict !== 'undecided') break;
    }
    return step!;
  };

  const badIndex = commits.length - 1;
  const check = await ask(badIndex, 'check', null);
  const finish = (outcome: BisectOutcome): BisectResult => ({ outcome, steps, check });
  if (check.verdict === 'skipped')
    return finish({ kind: 'unmeasurable', commit: check.commit, failure: check.failure ?? null });
  if (check.verdict !== 'slower')
    return finish({ kind: 'no-culprit', verdict: check.verdict, ratio: check.ratio ?? null });

  const badRatio = check.ratio ?? null;
  let lastSame = -1;
  let firstSlower = badIndex;
  let slowerRatio = badRatio;
  const untestable = new Map<number, Untestable['why']>();
  let stopped: 'untestable' | 'step-budget' = 'untestable';
  for (;;) {
    const next = nextIndex(lastSame, firstSlower, untestable);
    if (next === null) break;
    if (options.maxSteps !== undefined && steps.length >= options.maxSteps) {
      stopped = 'step-budget';
      break;
    }
    const step = await ask(next, 'step', badRatio);
    if (step.verdict === 'slower') {
      firstSlower = next;
      slowerRatio = step.ratio ?? null;
    } else if (step.verdict === 'same') lastSame = next;
    else untestable.set(next, step.verdict);
    if (step.failure?.side === 'good')
      return finish({ kind: 'unmeasurable', commit: step.commit, failure: step.failure });
  }
  if (firstSlower === lastSame + 1)
    return finish({ kind: 'culprit', commit: commits[firstSlower]!, index: firstSlower, ratio: slowerRatio });
  const inside = [...untestable.entries()]
    .filter(([i]) => i > lastSame && i < firstSlower)
    .sort(([a], [b]) => a - b)
    .map(([index, why]) => ({ commit: commits[index]!, index, why }));
  return finish({
    kind: 'range',
    commits: commits.slice(lastSame + 1, firstSlower + 1),
    first: lastSame + 1,
    last: firstSlower,
    untestable: inside,
    stopped,
    ratio: slowerRatio,
  });
}

/**
 * The next commit to measure strictly between the last same commit and the first slower one: the
 * middle, or when it could not be placed, the nearest one that can (after, then before it). Null
 * when none is left.
 */
export function nextIndex(
  lastSame: number,
  firstSlower: number,
  untestable: ReadonlyMap<number, unknown>,
): number | null {
  const middle = Math.floor((lastSame + firstSlower) / 2);
  for (let d = 0; d < firstSlower - lastSame; d++) {
    for (const i of d === 0 ? [middle] : [middle + d, middle - d]) {
      if (i > lastSame && i < firstSlower && !untestable.has(i)) return i;
    }
  }
  return null;
}

function validateCommits(commits: readonly string[]): void {
  if (commits.length === 0)
    throw new RangeError(
      'bisect: no commits between good and bad; expected good to be an ancestor of bad, ' +
        'with at least one commit after it',
    );
  const seen = new Set<string>();
  for (const c of commits) {
    if (seen.has(c)) throw new RangeError(`bisect: commit ${c} appears twice in the list; expected each once`);
    seen.add(c);
  }
}
