// Frozen copy of harness/stats/decision.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Whether a change is real: two gates must both pass (in the spirit of asv's "statistically
// significant and larger than the noise"): a Mann-Whitney p < alpha on the per-trial values, and the
// CI of the change (a ratio) lying entirely outside a noise band around 1.
import type { Interval } from './bootstrap.js';
import { mannWhitney } from './mann-whitney.js';
import { direction, type Direction } from './verdict.js';

export interface ChangeDecision {
  direction: Direction;
  p: number;
  /** Which gates passed: significance (p < alpha) and size (CI outside the band). */
  significant: boolean;
  outsideBand: boolean;
  reason: string;
}

export function decideChange(
  before: readonly number[],
  after: readonly number[],
  ratio: Interval | null,
  opts: { alpha?: number; band?: number } = {},
): ChangeDecision {
  const alpha = opts.alpha ?? 0.05;
  const band = opts.band ?? 0.01;
  const p = before.length > 0 && after.length > 0 ? mannWhitney(before, after).p : 1;
  const d = direction(ratio, band);
  const significant = p < alpha;
  const outsideBand = d !== 'same';
  const changed = significant && outsideBand;
  const ci = ratio
    ? `ratio ${ratio.estimate.toFixed(3)} [${ratio.low.toFixed(3)}, ${ratio.high.toFixed(3)}]`
    : 'no ratio';
  const reason = changed
    ? `p = ${p.toPrecision(2)} < ${alpha} and the ${ci} lies outside 1 +/- ${band}`
    : !significant
      ? `not significant: p = ${p.toPrecision(2)} >= ${alpha} (${ci})`
      : `significant (p = ${p.toPrecision(2)}) but the ${ci} reaches into the +/-${band} noise band`;
  return { direction: changed ? d : 'same', p, significant, outsideBand, reason };
}
