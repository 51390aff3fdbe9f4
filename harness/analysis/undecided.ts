// An undecided ratio in words that match its CI, and what more rounds would decide: the smallest
// effect the runs could have shown, from the CI's half-width on the log scale (about 1/sqrt(rounds)).
import type { Interval } from '../domain/index.js';

/** A ratio as "0.93x", with the digits it takes not to round onto 1 or a band edge (0.9955 -> "0.996x"). */
export function fmtRatio(v: number, band = 0): string {
  if (!Number.isFinite(v)) return '-';
  if (v >= 10) return `${v.toFixed(1)}x`;
  const marks = [1, 1 - band, 1 + band];
  for (let digits = 2; digits < 6; digits++) {
    const shown = Number(v.toFixed(digits));
    if (marks.every((m) => Math.sign(shown - m) === Math.sign(v - m))) return `${v.toFixed(digits)}x`;
  }
  return `${v.toFixed(6)}x`;
}

/** The band as "+/-2.0%". */
export const fmtBand = (band: number): string => `+/-${(band * 100).toFixed(1)}%`;

/**
 * Where an undecided CI lies against 1 and the noise band 1 +/- band, as a clause that is true of
 * it: "the CI [0.93x, 0.996x] lies below 1 but reaches inside the noise band +/-2.0%".
 */
export function undecidedCi(ci: Interval, band: number): string {
  const shown = `the CI [${fmtRatio(ci.low, band)}, ${fmtRatio(ci.high, band)}]`;
  const edges = `${fmtRatio(1 - band, band)} to ${fmtRatio(1 + band, band)}`;
  const inside = `the noise band ${fmtBand(band)} (${edges})`;
  if (ci.high < 1) return `${shown} lies below 1 but reaches inside ${inside}: not clearly slower`;
  if (ci.low > 1) return `${shown} lies above 1 but reaches inside ${inside}: not clearly faster`;
  const below = ci.low < 1 - band;
  const above = ci.high > 1 + band;
  if (below && above) return `${shown} includes 1 and reaches past both edges of ${inside}: too wide to tell`;
  return (
    `${shown} includes 1 but reaches ${below ? 'below' : 'above'} ${inside}: ` +
    'neither a difference nor shown to be within the band'
  );
}

export interface Detectable {
  /** Rounds (pairs) behind the CI. */
  rounds: number;
  /** Half-width of the CI on the log scale. */
  half_width: number;
  /**
   * The ratios the runs could have called, each side: an estimate above (1 + band) e^h, or below
   * (1 - band) e^-h, puts a CI of this half-width wholly outside the band.
   */
  faster_above: number;
  slower_below: number;
  /**
   * Rounds in all that would decide a difference the size of the estimate (a change, or that it
   * lies within the band), if the half-width shrinks as 1/sqrt(rounds); null when the estimate sits
   * on a band edge, where no number of rounds decides.
   */
  rounds_to_decide: number | null;
}

/** What the undecided CI of `rounds` paired rounds could detect, and the rounds that would decide it. */
export function detectable(ci: Interval, band: number, rounds: number): Detectable | null {
  const values = [ci.low, ci.high, ci.estimate];
  if (!(rounds >= 1) || !values.every((v) => Number.isFinite(v) && v > 0) || !(band >= 0 && band < 1)) return null;
  const h = (Math.log(ci.high) - Math.log(ci.low)) / 2;
  const d = Math.log(ci.estimate);
  const up = Math.log(1 + band);
  const down = Math.log(1 - band);
  // The half-width that would decide a difference of the estimate's size: outside the band, the
  // distance from the estimate to the edge it has passed; inside, to the nearer edge.
  const need = d > up ? d - up : d < down ? down - d : Math.min(up - d, d - down);
  const total = need > 0 && h > 0 ? Math.ceil(rounds * (h / need) ** 2) : null;
  return {
    rounds,
    half_width: h,
    faster_above: (1 + band) * Math.exp(h),
    slower_below: (1 - band) * Math.exp(-h),
    rounds_to_decide: total === null ? null : Math.max(total, rounds + 1),
  };
}

/** A ratio as a signed change: 0.955 -> "-4.5%", 1.2 -> "+20.0%". */
export function fmtChange(ratio: number): string {
  const p = (ratio - 1) * 100;
  return `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`;
}
