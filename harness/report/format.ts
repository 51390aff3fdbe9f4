// How every report shows a number: "-" when it is missing or not finite. A run.json written with an
// Infinity holds null, and a journal is shown as written, so no report may print Infinity or NaN,
// or crash on a null where it expects a number.
import type { Interval } from '../domain/index.js';

/** What a report shows for a missing or non-finite value. */
export const MISSING = '-';

/** `f(v)` for a finite number, else "-". */
export function figure(v: unknown, f: (v: number) => string = String): string {
  return typeof v === 'number' && Number.isFinite(v) ? f(v) : MISSING;
}

/** "estimate [low, high]", each part through figure(); "-" when there is no finite estimate. */
export function interval(i: Interval | null | undefined, f: (v: number) => string): string {
  if (!i || !(typeof i.estimate === 'number' && Number.isFinite(i.estimate))) return MISSING;
  return `${f(i.estimate)} [${figure(i.low, f)}, ${figure(i.high, f)}]`;
}

/** An interval whose three numbers are finite, else null: what a file may carry as a CI. */
export function finiteInterval(i: Interval | null | undefined): Interval | null {
  return i && [i.estimate, i.low, i.high].every((v) => typeof v === 'number' && Number.isFinite(v)) ? i : null;
}

/** A ratio as a signed percent change: 1.052 -> "+5.2%". */
export function fmtPct(ratio: number): string {
  const p = (ratio - 1) * 100;
  return `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`;
}

/** A ratio's interval as percent changes: "+5.2% [+1.0%, +9.6%]". */
export const pctInterval = (r: Interval): string => `${fmtPct(r.estimate)} [${fmtPct(r.low)}, ${fmtPct(r.high)}]`;
