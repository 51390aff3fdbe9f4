// Simulated nightly histories for the calibration of the nightly gate: several metrics a night, each
// night's value the geometric mean of a few trials (trial noise), times a night-to-night factor
// (Gaussian, heavy-tailed t3 or AR(1), part of it shared by the metrics of a night), with an optional
// step. The gates under test are the shipped code; only the data is made here.
import { createRng } from '../../harness/stats/rng.js';
import { gaussian } from './noise-sim.js';

export type NightNoise = 'gaussian' | 't3' | 'ar1';

export interface HistorySpec {
  nights: number;
  metrics: number;
  /** Trials per metric a night, and their sigma of ln throughput. */
  trials: number;
  trialNoise: number;
  /** Night-to-night sigma of ln throughput (the marginal sd for t3 and AR(1)). */
  spread: number;
  noise: NightNoise;
  /** AR(1) coefficient for noise 'ar1'. */
  phi?: number;
  /** Share of the night's variance common to all metrics of the night. */
  shared: number;
  /** A step: throughput times `factor` from the 0-based night `at` on. */
  step?: { at: number; factor: number };
}

/** A night's trials per metric (throughputs around 100 samples/s). */
export type NightTrials = number[][];

export class HistorySim {
  private readonly z: () => number;
  private readonly u: () => number;
  private readonly state: number[];
  private sharedState = 0;
  night = 0;
  /** The night effect (ln) of each metric tonight, kept for re-measuring the same night. */
  private tonight: number[] = [];
  private previous: number[];
  private previousShared = 0;

  constructor(
    readonly spec: HistorySpec,
    seed: number,
  ) {
    this.u = createRng(seed);
    this.z = gaussian(this.u);
    this.state = Array.from({ length: spec.metrics }, () => 0);
    this.previous = [...this.state];
    if (spec.noise === 'ar1') {
      // Start from the stationary distribution.
      this.sharedState = this.z() * spec.spread;
      for (let m = 0; m < spec.metrics; m++) this.state[m] = this.z() * spec.spread;
    }
  }

  /** A draw with unit variance from the night noise's shape. */
  private innovation(): number {
    if (this.spec.noise !== 't3') return this.z();
    // Student t with 3 df, scaled to unit variance (its variance is 3).
    const chi = this.z() ** 2 + this.z() ** 2 + this.z() ** 2;
    return this.z() / Math.sqrt(chi / 3) / Math.sqrt(3);
  }

  private effects(fromShared: number, from: number[]): { shared: number; own: number[] } {
    const s = this.spec;
    if (s.noise === 'ar1') {
      const phi = s.phi ?? 0.6;
      const k = Math.sqrt(1 - phi * phi) * s.spread;
      return { shared: phi * fromShared + k * this.z(), own: from.map((x) => phi * x + k * this.z()) };
    }
    return { shared: this.innovation() * s.spread, own: from.map(() => this.innovation() * s.spread) };
  }

  private combine(shared: number, own: number[]): number[] {
    const a = Math.sqrt(this.spec.shared);
    const b = Math.sqrt(1 - this.spec.shared);
    return own.map((o) => a * shared + b * o);
  }

  private level(): number {
    const st = this.spec.step;
    return st && this.night >= st.at ? Math.log(st.factor) : 0;
  }

  private trials(effect: number, n: number): number[] {
    const lvl = this.level();
    return Array.from({ length: n }, () => 100 * Math.exp(lvl + effect + this.z() * this.spec.trialNoise));
  }

  /** The next night: each metric's trials. */
  nextNight(): NightTrials {
    this.previous = [...this.state];
    this.previousShared = this.sharedState;
    const e = this.effects(this.sharedState, this.state);
    this.sharedState = e.shared;
    e.own.forEach((x, m) => (this.state[m] = x));
    this.tonight = this.combine(e.shared, e.own);
    const out = this.tonight.map((eff) => this.trials(eff, this.spec.trials));
    this.night += 1;
    return out;
  }

  /**
   * A confirmation of tonight's metric m with n trials. `redraw`: the night effect is drawn again
   * (the spread between runs is mostly per run: process, placement, clocks); else it persists and
   * only the trials are new.
   */
  remeasure(m: number, n: number, redraw: boolean): number[] {
    this.night -= 1;
    let effect = this.tonight[m]!;
    if (redraw) {
      const e = this.effects(this.previousShared, this.previous);
      effect = this.combine(e.shared, e.own)[m]!;
    }
    const out = this.trials(effect, n);
    this.night += 1;
    return out;
  }
}

export function geomean(xs: readonly number[]): number {
  return Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
}

/** A seeded uniform in [0, 1) for the bench's own choices. */
export { createRng };
