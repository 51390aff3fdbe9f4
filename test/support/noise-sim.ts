// A simulated machine for the calibration of the statistics: trials of known true throughput with
// the noise of shared machines (lognormal steps, between-trial spread, drift over the run,
// autocorrelated steps, bursts of contention). It feeds the shipped strategies (runClaimPairs,
// runCompare, runSweep) through their trial functions; the statistics are never re-implemented here.
import { createRng } from '../../harness/stats/rng.js';
import type { ArmTrial } from '../../harness/search/sweep.js';
import type { StepSample } from '../../harness/domain/index.js';

export interface Noise {
  name: string;
  /** Between-trial sigma of log throughput (0.03: about 3%). */
  between: number;
  /** Per-step sigma of log step time. */
  step: number;
  /** AR(1) coefficient of the step noise within a trial. */
  ar?: number;
  /** Total slowdown from the first trial to the last (0.1: 10%), linear in the trial clock. */
  drift?: number;
  /** Chance that a contention burst starts at a trial, its mean length in trials, and its slowdown range. */
  burst?: { start: number; meanLength: number; min: number; max: number };
}

/** The calibration grid: between-trial spread 1-8%, drift, autocorrelated steps, contention bursts. */
export const NOISE_GRID: readonly Noise[] = [
  { name: 'between 1%, steps 5%', between: 0.01, step: 0.05 },
  { name: 'between 3%, steps 5%', between: 0.03, step: 0.05 },
  { name: 'between 8%, steps 5%', between: 0.08, step: 0.05 },
  { name: 'between 3%, drift 10% over the run', between: 0.03, step: 0.05, drift: 0.1 },
  { name: 'between 3%, AR(1) 0.8 steps at 10%', between: 0.03, step: 0.1, ar: 0.8 },
  {
    name: 'between 3%, bursts 10-40% (~15% of trials)',
    between: 0.03,
    step: 0.05,
    burst: { start: 0.05, meanLength: 3, min: 0.1, max: 0.4 },
  },
  {
    name: 'between 8%, drift 10%, bursts 10-40%',
    between: 0.08,
    step: 0.05,
    drift: 0.1,
    burst: { start: 0.05, meanLength: 3, min: 0.1, max: 0.4 },
  },
];

/** Standard normal draws (Box-Muller) from a seeded uniform generator. */
export function gaussian(rng: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const u = Math.max(rng(), 1e-300);
    const v = rng();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/**
 * One simulated machine: `trial(rate)` returns a trial's steps at true throughput `rate`
 * (samples/s), advancing the machine's clock (drift, bursts) by one trial.
 */
export class SimMachine {
  private readonly z: () => number;
  private readonly u: () => number;
  private clock = 0;
  private burstLeft = 0;
  private burstFactor = 1;

  constructor(
    readonly noise: Noise,
    seed: number,
    /** Trials the run is expected to take, for the drift's slope. */
    private readonly horizon = 40,
    readonly steps = 10,
    readonly batch = 64,
  ) {
    this.u = createRng(seed);
    this.z = gaussian(this.u);
  }

  trialSteps(rate: number): StepSample[] {
    const n = this.noise;
    const t = this.clock++;
    if (n.burst) {
      if (this.burstLeft === 0 && this.u() < n.burst.start) {
        this.burstLeft = 1 + Math.floor(-Math.log(Math.max(this.u(), 1e-12)) * n.burst.meanLength);
        this.burstFactor = 1 - (n.burst.min + (n.burst.max - n.burst.min) * this.u());
      }
    }
    const inBurst = this.burstLeft > 0;
    if (inBurst) this.burstLeft -= 1;
    const drift = 1 - (n.drift ?? 0) * Math.min(1, t / this.horizon);
    const level = rate * Math.exp(n.between * this.z()) * drift * (inBurst ? this.burstFactor : 1);
    const ar = n.ar ?? 0;
    let e = (n.step * this.z()) / Math.sqrt(1 - ar * ar || 1);
    const out: StepSample[] = [];
    for (let s = 0; s < this.steps; s++) {
      if (s > 0) e = ar * e + n.step * this.z();
      out.push({ samples: this.batch, seconds: (this.batch / level) * Math.exp(e) });
    }
    return out;
  }

  /** A successful ArmTrial at true throughput `rate`, 1 s of wall time per step. */
  armTrial(rate: number): ArmTrial {
    const steps = this.trialSteps(rate);
    return { outcome: 'ok', reason: 'ok', steps, wallSeconds: steps.reduce((a, s) => a + s.seconds, 0) + 0.5 };
  }
}

/** exp(E[log trial throughput]) of a stationary machine at true rate 1, by simulation: the target of a config's CI. */
export function stationaryLevel(noise: Noise, seed = 99, trials = 20000): number {
  const m = new SimMachine({ ...noise, drift: 0 }, seed, trials);
  let sum = 0;
  for (let i = 0; i < trials; i++) {
    const steps = m.trialSteps(1);
    sum += Math.log(steps.reduce((a, s) => a + s.samples, 0) / steps.reduce((a, s) => a + s.seconds, 0));
  }
  return Math.exp(sum / trials);
}
