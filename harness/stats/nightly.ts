// The nightly gate on the series, not on one pair of runs: each night's value of a metric is tested
// against a reference window of earlier nights at the current level, with the spread between
// nights (estimated from that history, autocorrelation included) as the noise.
//
// Per metric and night: the mean of the last k nights (k in `looks`, 1 and 3 by default) against
// the mean of the reference, a t test on ln(value) with df from the reference (reduced for the
// autocorrelation). The reference leaves
// out the last max(k) - 1 nights (so a regression not flagged on its first nights is not yet
// averaged into the reference when the next nights test it) and every held night. Alpha is a budget per night for the
// whole experiment: split over the metrics tested that night and the look-backs (Bonferroni).
//
// A flagged night is held out of the reference. It becomes the reference only when acknowledged
// (`tunebench baseline accept`), or when the change persists `persist` nights in a row: then the
// held nights start a new level. A held night followed by an unflagged one was an outlier and stays
// out. The state is replayed from the start of the series each time, so it is a pure function of
// the values and the acknowledgements.
//
// The lag-1 autocorrelation is one estimate for the experiment, pooled over its metrics (they run
// on the same machines the same nights): a metric's own 10 to 30 nights estimate it too poorly,
// and both errors cost: too low makes false alarms on autocorrelated series, and the margin that
// guards against that (one standard error up) costs power on independent ones.
import { tCdf } from './student-t.js';

export interface NightlyOptions {
  /** Nights of the current level in the reference (the most recent ones). @default 30 */
  window: number;
  /** Nights the reference needs before the gate tests anything (warm-up). @default 5 */
  minReference: number;
  /**
   * The gate tests the mean of the last k nights for each k here; the reference leaves out the last
   * max(k) - 1 nights.
   * @default [1, 3]
   */
  looks: number[];
  /** Nights a change must persist (all flagged, one direction) before it becomes the reference. @default 5 */
  persist: number;
  /**
   * Alarm budget per night and direction for the whole experiment (all metrics); the confirmation
   * of an alarm brings false exits lower.
   * @default 0.04
   */
  alpha: number;
  /** A regression counts only when the estimated drop is beyond this fraction (0.05 = 5%). @default 0 */
  minDrop: number;
}

export const NIGHTLY_DEFAULTS: NightlyOptions = {
  window: 30,
  minReference: 5,
  looks: [1, 3],
  persist: 5,
  alpha: 0.04,
  minDrop: 0,
};

/** The smallest night-to-night spread (sd of ln value) the gate assumes: 0.2%, for near-constant series. */
export const MIN_SPREAD = 0.002;
/** A look-back over several nights counts only when tonight alone is on its side at this one-sided p. */
export const OWN_SIDE_P = 0.2;
/** The largest lag-1 autocorrelation the gate models; beyond it the series is closer to a random walk. */
const MAX_RHO = 0.9;
/**
 * The metrics of a night share part of their noise, so their lag-1 products are correlated: the
 * standard error of the pooled autocorrelation counts them as at most this many independent series.
 */
const INDEPENDENT_METRICS = 2;

export type NightStatus =
  | 'warm-up' // too few reference nights: accepted without a test
  | 'accepted' // tested, no change: joins the reference
  | 'flagged' // a change: held out of the reference
  | 'outlier' // flagged, then the next night was not: stays out of the reference
  | 'persisted' // the change held for `persist` nights: its nights are now the reference
  | 'acknowledged' // accepted by `tunebench baseline accept` (or pinned): the start of a new level
  | 'missing'; // no value this night

export interface MetricTest {
  /** Look-back (nights averaged) of the smallest p-value. */
  k: number;
  /** exp(mean of the last k nights' ln value - the reference's): the estimated ratio to the reference. */
  ratio: number;
  /** One-sided p-values for a drop and for a rise at that look-back (the smallest over look-backs). */
  pLower: number;
  pUpper: number;
  /** Reference nights (indices into the series) and the spread used. */
  reference: number[];
  spread: number;
  rho: number;
  df: number;
}

export interface NightVerdict {
  index: number;
  status: NightStatus;
  /** regression / improvement when flagged (or persisted, acknowledged); null otherwise. */
  direction: 'regression' | 'improvement' | null;
  test: MetricTest | null;
  /** The per-test alpha this night (the night's budget over metrics and look-backs). */
  alpha: number | null;
}

export interface LevelChange {
  /** First night of the new level. */
  index: number;
  /** How it became the reference. */
  how: 'persisted' | 'acknowledged';
  ratio: number;
  direction: 'regression' | 'improvement';
}

export interface MetricReplay {
  nights: NightVerdict[];
  changes: LevelChange[];
}

/** Resolves and checks the options; throws RangeError naming the bad one. */
export function nightlyOptions(given: Partial<NightlyOptions> = {}): NightlyOptions {
  const o = {
    ...NIGHTLY_DEFAULTS,
    ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)),
  };
  const int = (name: 'window' | 'minReference' | 'persist', min: number) => {
    if (!Number.isInteger(o[name]) || o[name] < min)
      throw new RangeError(`nightly gate: ${name} must be an integer >= ${min}, got ${o[name]}`);
  };
  int('window', 2);
  int('minReference', 2);
  if (
    !Array.isArray(o.looks) ||
    o.looks.length === 0 ||
    o.looks.some((k, i) => !Number.isInteger(k) || k < 1 || (i > 0 && k <= o.looks[i - 1]!))
  ) {
    throw new RangeError(`nightly gate: looks must be increasing integers >= 1, got ${JSON.stringify(o.looks)}`);
  }
  int('persist', 1);
  if (o.minReference > o.window)
    throw new RangeError(`nightly gate: minReference (${o.minReference}) must not exceed window (${o.window})`);
  if (!(o.alpha > 0 && o.alpha < 0.5)) throw new RangeError(`nightly gate: alpha must lie in (0, 0.5), got ${o.alpha}`);
  if (!(o.minDrop >= 0 && o.minDrop < 1))
    throw new RangeError(`nightly gate: minDrop must lie in [0, 1), got ${o.minDrop}`);
  return o;
}

/** Sum over a, b in [0, n) of rho^|a-b|, divided by n^2: Var(mean of n AR(1) nights) / sigma^2. */
export function meanVarianceFactor(n: number, rho: number): number {
  if (n <= 0) return Infinity;
  if (rho <= 0) return 1 / n;
  let s = n;
  for (let lag = 1; lag < n; lag++) s += 2 * (n - lag) * rho ** lag;
  return s / (n * n);
}

/** Sums of one metric's nights grouped in levels, about each level's mean: squares, lag-1 products, nights, df. */
interface LagSums {
  ss: number;
  lagged: number;
  n: number;
  df: number;
}

function lagSums(levels: readonly (readonly number[])[]): LagSums {
  let ss = 0;
  let lagged = 0;
  let n = 0;
  let df = 0;
  for (const ys of levels) {
    if (ys.length < 2) continue;
    const mean = ys.reduce((a, b) => a + b, 0) / ys.length;
    for (let i = 0; i < ys.length; i++) {
      ss += (ys[i]! - mean) ** 2;
      if (i > 0) lagged += (ys[i]! - mean) * (ys[i - 1]! - mean);
    }
    n += ys.length;
    df += ys.length - 1;
  }
  return { ss, lagged, n, df };
}

/**
 * The lag-1 autocorrelation of one or several metrics' nights (each grouped in levels): the mean of
 * the metrics' estimates weighted by their nights, bias-corrected, then one standard error up,
 * clipped to [0, 0.9].
 */
export function pooledRho(metrics: readonly (readonly (readonly number[])[])[]): number {
  const sums = metrics.map(lagSums).filter((s) => s.df >= 1 && s.ss > 0);
  if (sums.length === 0) return 0;
  const n = sums.reduce((a, s) => a + s.n, 0);
  const raw = sums.reduce((a, s) => a + s.n * (s.lagged / s.ss), 0) / n;
  // The lag-1 estimator is biased low by about (1 + 3 rho) / m for m nights (Kendall 1954); pooling
  // metrics does not shrink that bias, m is their mean length.
  const corrected = Math.max(0, raw + ((1 + 3 * Math.max(0, raw)) * sums.length) / n);
  // Then one standard error up (sqrt((1 - rho^2) / nights)): underestimating rho understates the
  // variance of a mean of consecutive nights, which is what makes false alarms. Correlated metrics
  // count as fewer independent series.
  const nights = (n * Math.min(sums.length, INDEPENDENT_METRICS)) / sums.length;
  return Math.min(MAX_RHO, corrected + Math.sqrt((1 - Math.min(corrected, 1) ** 2) / nights));
}

/**
 * Night-to-night spread of ln values grouped in levels: the pooled sum of squares about each
 * level's mean, corrected for the lag-1 autocorrelation (`rho`, by default estimated from these
 * levels alone: pooledRho), which otherwise makes both the spread and the variance of a mean too
 * small.
 */
export function levelSpread(
  levels: readonly (readonly number[])[],
  rho: number = pooledRho([levels]),
): { sd: number; rho: number; df: number } {
  const { ss, df } = lagSums(levels);
  if (df < 1) return { sd: MIN_SPREAD, rho: 0, df: 0 };
  // E[SS] = sigma^2 * sum over levels of m (1 - c_m), c_m the variance factor of a level's mean.
  let expected = 0;
  for (const ys of levels) if (ys.length >= 2) expected += ys.length * (1 - meanVarianceFactor(ys.length, rho));
  const sd = Math.sqrt(ss / Math.max(expected, 1e-9));
  return { sd: Math.max(MIN_SPREAD, sd), rho, df };
}

/** Degrees of freedom of a spread estimated from df AR(1) nights: df (1 - rho^2) / (1 + rho^2) (Bartlett 1946). */
export function effectiveDf(df: number, rho: number): number {
  return df < 1 ? df : Math.max(1, (df * (1 - rho * rho)) / (1 + rho * rho));
}

/**
 * The test of the last k nights ending at `at` (their ln values `recent`, oldest first) against the
 * reference level `ref` with the pooled spread. Returns the look-back with the smallest p-value.
 */
export function windowTest(
  recent: readonly number[],
  ref: readonly number[],
  spread: { sd: number; rho: number; df: number },
  looks: readonly number[],
): Omit<MetricTest, 'reference'> | null {
  if (ref.length === 0 || recent.length === 0 || spread.df < 1) return null;
  const df = effectiveDf(spread.df, spread.rho);
  const refMean = mean(ref);
  const refVar = meanVarianceFactor(ref.length, spread.rho);
  // Tonight alone: several nights count only when tonight is itself on that side (one-sided
  // p <= OWN_SIDE_P); otherwise one slow night would keep the nights after it flagged while it is
  // in the look-back.
  const ownLower = tCdf((recent.at(-1)! - refMean) / (spread.sd * Math.sqrt(1 + refVar)), df);
  let best: Omit<MetricTest, 'reference'> | null = null;
  for (const k of looks) {
    if (k > recent.length) break;
    const d = mean(recent.slice(recent.length - k)) - refMean;
    const se = spread.sd * Math.sqrt(meanVarianceFactor(k, spread.rho) + refVar);
    const p = tCdf(d / se, df);
    const pLower = k > 1 && ownLower > OWN_SIDE_P ? 1 : p;
    const pUpper = k > 1 && 1 - ownLower > OWN_SIDE_P ? 1 : 1 - p;
    const test = { k, ratio: Math.exp(d), pLower, pUpper, spread: spread.sd, rho: spread.rho, df };
    if (!best || Math.min(pLower, pUpper) < Math.min(best.pLower, best.pUpper)) best = test;
  }
  return best;
}

/** The flags of one night for one metric, given the per-test alpha. */
export function flagOf(
  test: Pick<MetricTest, 'pLower' | 'pUpper' | 'ratio'> | null,
  perTestAlpha: number,
  minDrop: number,
): 'regression' | 'improvement' | null {
  if (!test) return null;
  if (test.pLower <= perTestAlpha && test.ratio < 1 - minDrop) return 'regression';
  if (test.pUpper <= perTestAlpha && test.ratio > 1) return 'improvement';
  return null;
}

interface State {
  /** Accepted nights of earlier levels, then the current level (indices). */
  levels: number[][];
  /** Held (flagged) nights since the last accepted one. */
  held: { index: number; direction: 'regression' | 'improvement' }[];
}

/** One night's tests before they are committed: per metric undefined (no value), null (warm-up) or a test. */
export interface NightEvaluation {
  index: number;
  values: (number | null)[];
  tests: (MetricTest | null | undefined)[];
  flags: ('regression' | 'improvement' | null)[];
  /** The per-test alpha: the night's budget over the metrics tested and the look-backs. */
  alpha: number | null;
}

/**
 * The gate over several metrics of one experiment, stepped night by night: `evaluate` tests a night
 * without changing anything (so a flagged value can be re-measured and evaluated again), `commit`
 * records it. Values are positive numbers, or null where a metric is missing that night.
 */
export class NightlyGate {
  readonly options: NightlyOptions;
  private readonly logs: (number | null)[][];
  private readonly states: State[];
  readonly replays: MetricReplay[];
  private next = 0;

  constructor(metrics: number, given: Partial<NightlyOptions> = {}) {
    this.options = nightlyOptions(given);
    this.logs = Array.from({ length: metrics }, () => []);
    this.states = Array.from({ length: metrics }, () => ({ levels: [[]], held: [] }));
    this.replays = Array.from({ length: metrics }, () => ({ nights: [], changes: [] }));
  }

  /** The tests of the next night on these values. */
  evaluate(values: readonly (number | null)[]): NightEvaluation {
    if (values.length !== this.logs.length)
      throw new RangeError(`nightly gate: expected ${this.logs.length} values a night, got ${values.length}`);
    const i = this.next;
    values.forEach((v, m) => {
      if (v !== null && v !== undefined && !(Number.isFinite(v) && v > 0))
        throw new RangeError(
          `nightly gate: metric ${m}, night ${i}: values must be positive finite numbers or null, got ${v}`,
        );
    });
    // One autocorrelation for the experiment: pooled over the metrics with a value tonight.
    const present = values.flatMap((v, m) => (v === null || v === undefined ? [] : [m]));
    const rho = pooledRho(
      present.map((m) => spreadLevels(this.states[m]!, i, this.options).map((l) => l.map((j) => this.logs[m]![j]!))),
    );
    const tests = values.map((v, m) => {
      if (v === null || v === undefined) return undefined;
      const series = this.logs[m]!;
      return testNight((j) => (j === i ? Math.log(v) : (series[j] ?? null)), this.states[m]!, i, this.options, rho);
    });
    const tested = tests.filter((t) => t !== undefined && t !== null).length;
    const alpha = tested > 0 ? this.options.alpha / (tested * this.options.looks.length) : null;
    const flags = tests.map((t) => (t ? flagOf(t, alpha!, this.options.minDrop) : null));
    return { index: i, values: [...values], tests, flags, alpha };
  }

  /** Records an evaluated night; `acknowledged` makes a flagged night the start of a new level. */
  commit(ev: NightEvaluation, acknowledged = false): NightVerdict[] {
    if (ev.index !== this.next)
      throw new RangeError(`nightly gate: night ${ev.index} evaluated, but night ${this.next} is next`);
    this.next += 1;
    return ev.tests.map((test, m) => {
      const v = ev.values[m];
      this.logs[m]!.push(v === null || v === undefined ? null : Math.log(v));
      return this.record(m, ev.index, test, ev.flags[m] ?? null, ev.alpha, acknowledged);
    });
  }

  /** The nights of metric m flagged and held out of the reference now (indices). */
  held(m: number): number[] {
    return this.states[m]!.held.map((h) => h.index);
  }

  private record(
    m: number,
    i: number,
    test: MetricTest | null | undefined,
    flag: 'regression' | 'improvement' | null,
    alpha: number | null,
    ack: boolean,
  ): NightVerdict {
    const st = this.states[m]!;
    const rep = this.replays[m]!;
    const series = this.logs[m]!;
    const push = (v: NightVerdict) => {
      rep.nights.push(v);
      return v;
    };
    if (test === undefined) return push({ index: i, status: 'missing', direction: null, test: null, alpha: null });
    if (test === null || !flag) {
      // Nights held before an unflagged one were outliers.
      for (const h of st.held) rep.nights[h.index]!.status = 'outlier';
      st.held = [];
      if (ack && st.levels.at(-1)!.length > 0) {
        // An acknowledged night that is not flagged (a pinned baseline) still starts the level the
        // later nights are tested against.
        const ratio = Math.exp(series[i]! - mean(st.levels.at(-1)!.map((j) => series[j]!)));
        rep.changes.push({ index: i, how: 'acknowledged', ratio, direction: ratio < 1 ? 'regression' : 'improvement' });
        st.levels.push([i]);
        return push({ index: i, status: 'acknowledged', direction: null, test, alpha: test === null ? null : alpha });
      }
      st.levels.at(-1)!.push(i);
      return push({
        index: i,
        status: test === null ? 'warm-up' : 'accepted',
        direction: null,
        test,
        alpha: test === null ? null : alpha,
      });
    }
    if (st.held.some((h) => h.direction !== flag)) {
      for (const h of st.held) rep.nights[h.index]!.status = 'outlier';
      st.held = [];
    }
    st.held.push({ index: i, direction: flag });
    const verdict = push({ index: i, status: 'flagged', direction: flag, test, alpha });
    if (ack || st.held.length >= this.options.persist) {
      const ratio = Math.exp(
        mean(st.held.map((h) => series[h.index]!)) - mean(st.levels.at(-1)!.map((j) => series[j]!)),
      );
      verdict.status = ack ? 'acknowledged' : 'persisted';
      rep.changes.push({ index: st.held[0]!.index, how: ack ? 'acknowledged' : 'persisted', ratio, direction: flag });
      st.levels.push(st.held.map((h) => h.index));
      st.held = [];
    }
    return verdict;
  }
}

/** Replays the gate over a whole history (one array of values per metric), with the acknowledged nights. */
export function replayNights(
  values: readonly (readonly (number | null)[])[],
  acknowledged: ReadonlySet<number> = new Set(),
  given: Partial<NightlyOptions> = {},
): MetricReplay[] {
  const gate = new NightlyGate(values.length, given);
  const nights = values.reduce((m, v) => Math.max(m, v.length), 0);
  for (let i = 0; i < nights; i++) gate.commit(gate.evaluate(values.map((v) => v[i] ?? null)), acknowledged.has(i));
  return gate.replays;
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Each level's accepted nights before night i's gap of max(looks) - 1 nights, the most recent `window` (indices). */
function spreadLevels(st: State, i: number, o: NightlyOptions): number[][] {
  const gap = i - (o.looks.at(-1)! - 1);
  return st.levels.map((l) => {
    let end = l.length;
    while (end > 0 && l[end - 1]! >= gap) end--;
    return l.slice(Math.max(0, end - o.window), end);
  });
}

/**
 * The test of night i for one metric: null while the reference is too short (warm-up). The
 * reference is the current level's accepted nights, the most recent `window`, leaving out the last
 * max(looks) - 1 nights before i; the spread pools every level's last `window` nights, with the
 * experiment's autocorrelation `rho`.
 */
function testNight(
  value: (j: number) => number | null,
  st: State,
  i: number,
  o: NightlyOptions,
  rho: number,
): MetricTest | null {
  const y = (j: number) => value(j)!;
  const lookBack = o.looks.at(-1)!;
  const current = st.levels.at(-1)!;
  const levels = spreadLevels(st, i, o);
  let ref = levels.at(-1)!;
  // A new level younger than the gap: its first night is the reference until it has more.
  if (ref.length === 0 && st.levels.length > 1) ref = current.slice(0, 1);
  if (st.levels.length === 1 && ref.length < o.minReference) return null;
  const spread = levelSpread(
    levels.map((l) => l.map(y)),
    rho,
  );
  // The recent nights: up to max(looks) nights ending at i, going back through the current level's
  // accepted nights after the reference and this excursion's held nights, never past an outlier.
  const recent = [i];
  const held = new Set(st.held.map((h) => h.index));
  const lastRef = ref.at(-1) ?? -1;
  const accepted = new Set(current.filter((j) => j > lastRef));
  for (let j = i - 1; j > lastRef && recent.length < lookBack; j--) {
    if (held.has(j) || accepted.has(j)) recent.unshift(j);
    else if (value(j) !== null) break;
  }
  const test = windowTest(recent.map(y), ref.map(y), spread, o.looks);
  return test && { ...test, reference: ref };
}
