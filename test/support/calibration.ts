// The calibration simulations: the shipped strategies (runCompare, runClaimPairs, runSweep: what
// the compare, claim and sweep stages call) driven through simulated trial functions on
// test/support/noise-sim.ts. The benchmark (test/bench/stats.bench.ts) runs them at scale; unit
// tests run them with small fixed seeds so that a regression in a rate fails CI.
import { runClaimPairs } from '../../harness/search/claim.js';
import { runCompare } from '../../harness/search/compare.js';
import { runSweep } from '../../harness/search/sweep.js';
import { parseClaim } from '../../harness/stats/claim.js';
import { logMeanInterval } from '../../harness/stats/log-ratio.js';
import { SimMachine, stationaryLevel, type Noise } from './noise-sim.js';
import type { ClaimVerdict, Config } from '../../harness/domain/index.js';

/**
 * The defaults of the stages: claim min_pairs 5, max_pairs 20, noise_band 0.01;
 * compare repeats 5, max_rounds 20, noise_band 0.02.
 */
export const CLAIM = { minPairs: 5, maxPairs: 20, noiseBand: 0.01 };
export const COMPARE = { minRounds: 5, maxRounds: 20, noiseBand: 0.02 };

const keyOf = (c: Config) => String(c['arm']);

export interface CompareStats {
  wrong: number;
  detected: number;
  coverage: number;
  armCoverage: number | null;
  meanTrials: number;
}

/** runCompare with a baseline at rate 1000 and one arm at 1000 * effect, `reps` times. */
export async function simulateCompare(
  noise: Noise,
  effect: number,
  reps: number,
  seed0: number,
): Promise<CompareStats> {
  let wrong = 0;
  let detected = 0;
  let covered = 0;
  let withCi = 0;
  let armCovered = 0;
  let armWithCi = 0;
  let trials = 0;
  const stationary = !noise.drift && !noise.burst;
  const level = stationary ? stationaryLevel(noise) : 1;
  for (let r = 0; r < reps; r++) {
    const m = new SimMachine(noise, seed0 + r, 2 * COMPARE.maxRounds);
    const rates: Record<string, number> = { base: 1000, cand: 1000 * effect };
    const out = await runCompare(async (c) => m.armTrial(rates[String(c['arm'])]!), {
      arms: [{ arm: 'base' }, { arm: 'cand' }],
      keyOf,
      budget: {},
      ...COMPARE,
    });
    trials += out.trials;
    const arm = out.arms[1]!;
    const truth = effect === 1 ? 'same' : effect > 1 ? 'faster' : 'slower';
    if (arm.decision === 'faster' || arm.decision === 'slower') {
      if (arm.decision !== truth) wrong += 1;
      else detected += 1;
    }
    if (arm.ratio) {
      withCi += 1;
      if (arm.ratio.low <= effect && effect <= arm.ratio.high) covered += 1;
    }
    if (stationary) {
      for (const [i, a] of out.arms.entries()) {
        const rs = a.trials.map(
          (t) => t.steps.reduce((x, s) => x + s.samples, 0) / t.steps.reduce((x, s) => x + s.seconds, 0),
        );
        const ci = logMeanInterval(rs, 0.05);
        if (!ci) continue;
        armWithCi += 1;
        const truthLevel = (i === 0 ? 1000 : 1000 * effect) * level;
        if (ci.low <= truthLevel && truthLevel <= ci.high) armCovered += 1;
      }
    }
  }
  return {
    wrong: wrong / reps,
    detected: detected / reps,
    coverage: withCi ? covered / withCi : NaN,
    armCoverage: stationary && armWithCi ? armCovered / armWithCi : null,
    meanTrials: trials / reps,
  };
}

export interface ClaimStats {
  rates: Record<ClaimVerdict, number>;
  coverage: number;
  meanPairs: number;
}

/** runClaimPairs on a claim with the candidate at `effect` times the baseline's throughput. */
export async function simulateClaim(
  noise: Noise,
  text: string,
  effect: number,
  reps: number,
  seed0: number,
): Promise<ClaimStats> {
  const claim = parseClaim(text);
  const rates: Record<ClaimVerdict, number> = { confirmed: 0, 'falls short': 0, exceeds: 0, inconclusive: 0 };
  let covered = 0;
  let withCi = 0;
  let pairs = 0;
  for (let r = 0; r < reps; r++) {
    const m = new SimMachine(noise, seed0 + r, 2 * CLAIM.maxPairs);
    const out = await runClaimPairs(
      async (side) => {
        const steps = m.trialSteps(side === 'baseline' ? 1000 : 1000 * effect);
        return steps.reduce((a, s) => a + s.samples, 0) / steps.reduce((a, s) => a + s.seconds, 0);
      },
      { claim, effectOf: (b, c) => c / b, ...CLAIM },
    );
    rates[out.verdict] += 1 / reps;
    pairs += out.pairs;
    if (out.effect) {
      withCi += 1;
      if (out.effect.low <= effect && effect <= out.effect.high) covered += 1;
    }
  }
  return { rates, coverage: withCi ? covered / withCi : NaN, meanPairs: pairs / reps };
}

export interface RaceStats {
  bestEliminated: number;
  medianRegret: number;
  meanEliminated: number;
  falseSignificance: number;
  trialSeconds: number;
  gridTrialSeconds: number;
  gridMedianRegret: number;
}

/**
 * runSweep (race and grid, 8 rounds at most) on configs with true rates `rates`;
 * the cost order is shuffled each replication.
 */
export async function simulateRace(
  noise: Noise,
  rates: readonly number[],
  reps: number,
  seed0: number,
): Promise<RaceStats> {
  const best = Math.max(...rates);
  let bestEliminated = 0;
  let eliminated = 0;
  let falseSignificance = 0;
  let seconds = 0;
  let gridSeconds = 0;
  const regrets: number[] = [];
  const gridRegrets: number[] = [];
  for (let r = 0; r < reps; r++) {
    // A random cost order, so that "the cheapest of the tied" is not always the best or the worst.
    const order = rates
      .map((_, i) => i)
      .sort((a, b) => Math.sin(seed0 + r * 7.1 + a * 13.7) - Math.sin(seed0 + r * 7.1 + b * 13.7));
    const configs = rates.map((_, i) => ({ arm: i, cost: order.indexOf(i) }));
    for (const strategy of ['race', 'grid'] as const) {
      const m = new SimMachine(noise, seed0 + r, rates.length * 8);
      const out = await runSweep(async (c) => m.armTrial(1000 * rates[Number(c['arm'])]!), {
        strategy,
        configs,
        keyOf,
        repeats: 8,
        budget: {},
        costOrder: ['cost'],
      });
      const pick = Number(out.ranking.chosen?.config['arm'] ?? 0);
      const regret = 1 - rates[pick]! / best;
      if (strategy === 'grid') {
        gridSeconds += out.trialSeconds;
        gridRegrets.push(regret);
        continue;
      }
      seconds += out.trialSeconds;
      regrets.push(regret);
      const gone = out.arms.filter((a) => a.status === 'eliminated');
      eliminated += gone.length;
      if (gone.some((a) => rates[Number(a.config['arm'])] === best)) bestEliminated += 1;
      // A "significantly faster" statement about configs that are in truth equal.
      if (
        gone.some(
          (a) =>
            rates[Number(a.config['arm'])]! >=
            Math.max(...out.arms.filter((x) => x.status !== 'eliminated').map((x) => rates[Number(x.config['arm'])]!)),
        )
      )
        falseSignificance += 1;
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  return {
    bestEliminated: bestEliminated / reps,
    medianRegret: med(regrets),
    meanEliminated: eliminated / reps,
    falseSignificance: falseSignificance / reps,
    trialSeconds: seconds / reps,
    gridTrialSeconds: gridSeconds / reps,
    gridMedianRegret: med(gridRegrets),
  };
}
