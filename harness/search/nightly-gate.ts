// A night of the nightly gate, measured paired: tonight's build and the reference build (the last accepted
// night's commit) as the two arms of runCompare, at one config, in rounds whose order alternates, with the
// sequential CI that holds at every look. A burst of load slows both trials of a round and cancels in
// their ratio; night-to-night drift of the machine never enters it. The question is one-sided, as a
// bisection step's: is tonight slower than the reference by more than the threshold? A regression when
// the CI of tonight/reference lies below 1 - threshold, none when it lies above, undecided when the
// rounds run out first (the verdict is runCompare's decision, never a second statistic).
import { runCompare, type CompareArm } from './compare.js';
import type { ArmPlanFn, ArmTrialFn } from './sweep.js';
import type { Config, LogInterval } from '../domain/index.js';

/** The parameter that names an arm's build in its config (the trial function reads it). */
export const BUILD_PARAMETER = 'commit';

/** The gate's rounds and error rate (the bench's settings: test/bench/nightly.bench.ts). */
export const NIGHT_DEFAULTS = {
  minRounds: 5,
  maxRounds: 20,
  /** Two-sided, over every look: the one-sided chance of a false regression is at most half of it. */
  alpha: 0.02,
} as const;

export type NightVerdict = 'regression' | 'no-regression' | 'undecided' | 'failed';

export interface NightOptions {
  /** Tonight's build and the reference's, as the trial function knows them (commits). */
  reference: string;
  tonight: string;
  /** The config both run at (the reference night's chosen config), without the build. */
  config: Config;
  /** A slowdown counts when tonight's throughput is below (1 - threshold) x the reference's, e.g. 0.05. */
  threshold: number;
  minRounds?: number;
  maxRounds?: number;
  alpha?: number;
  plan?: ArmPlanFn;
}

export interface NightMeasurement {
  verdict: NightVerdict;
  /** tonight / reference throughput over the rounds' pairs, with the sequential CI of the deciding look. */
  ratio: LogInterval | null;
  rounds: number;
  trials: number;
  /** Which side failed, and how, when the verdict is `failed`. */
  failure: { side: 'reference' | 'tonight'; detail: string } | null;
}

/** Measures one night: the reference and tonight in paired rounds, until decided or out of rounds. */
export async function measureNight(run: ArmTrialFn, o: NightOptions): Promise<NightMeasurement> {
  if (!(o.threshold > 0 && o.threshold < 1))
    throw new RangeError(`the gate's threshold must lie between 0 and 1 (a fraction), got ${o.threshold}`);
  const keyOf = (c: Config) => String(c[BUILD_PARAMETER]);
  const arm = (build: string): Config => ({ ...o.config, [BUILD_PARAMETER]: build });
  let trials = 0;
  const out = await runCompare(
    (config, opts) => {
      trials += 1;
      return run(config, opts);
    },
    {
      arms: [arm(o.reference), arm(o.tonight)],
      keyOf,
      minRounds: o.minRounds ?? NIGHT_DEFAULTS.minRounds,
      maxRounds: o.maxRounds ?? NIGHT_DEFAULTS.maxRounds,
      noiseBand: o.threshold,
      // One-sided: "not slower than 1 - threshold" ends the night as soon as the CI lies above it.
      noiseBandAbove: Number.POSITIVE_INFINITY,
      alpha: o.alpha ?? NIGHT_DEFAULTS.alpha,
      budget: {},
      ...(o.plan ? { plan: o.plan } : {}),
    },
  );
  const [ref, tonight] = out.arms as [CompareArm, CompareArm];
  const stopped = ref.stopped
    ? { side: 'reference' as const, detail: ref.stopped }
    : tonight.stopped
      ? { side: 'tonight' as const, detail: tonight.stopped }
      : null;
  if (stopped) return { verdict: 'failed', ratio: tonight.ratio, rounds: out.rounds, trials, failure: stopped };
  const verdict: NightVerdict =
    tonight.decision === 'slower' ? 'regression' : tonight.decision === 'undecided' ? 'undecided' : 'no-regression';
  return { verdict, ratio: tonight.ratio, rounds: out.rounds, trials, failure: null };
}
