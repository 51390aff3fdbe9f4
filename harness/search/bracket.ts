// The in-process bracket of a max-batch search: attempts in one warm process place the boundary cheaply,
// and the fresh-process search then decides it. A bracket is a value; nextAttempt and withAttempt are its
// pure transitions. Placement: geometric growth until two readings give a line, then the line's meeting
// with the cap, then the secant of the two largest passes inside the bracket, alternating with bisection
// so that a curve that bends (the fit overestimates) still closes in log2 steps.
import { fitLinear, type Reading } from './memory-fit.js';

export interface BracketOptions {
  multipleOf: number;
  start: number;
  ceiling: number;
  /** The memory the readings are compared with (the card's, or the host cap); null: no placement by memory. */
  capBytes: number | null;
  /** Attempts at most (a safety stop). */
  maxAttempts: number;
}

export type AttemptOutcome = 'ok' | 'oom' | 'crash' | 'invalid';

export interface BracketStep {
  /** In multiples. */
  k: number;
  outcome: AttemptOutcome;
  bytes: number | null;
  /** How the attempt was placed, for the stage's log. */
  why: string;
}

/** What the attempts showed: largest pass and smallest failure above it, in multiples (0 / null: none yet). */
export interface Bracket {
  readonly lo: number;
  readonly hi: number | null;
  readonly steps: readonly BracketStep[];
  /** Set when an attempt failed other than by memory: the bracket stops and tells nothing more. */
  readonly broken: boolean;
}

export const emptyBracket: Bracket = { lo: 0, hi: null, steps: [], broken: false };

/** Growth per attempt before two readings give a line. */
const GROWTH = 2;

/** The next attempt (multiple and why), or undefined once the bracket is closed or must stop. */
export function nextAttempt(b: Bracket, o: BracketOptions): { k: number; why: string } | undefined {
  const ceilK = Math.floor(o.ceiling / o.multipleOf);
  if (b.broken || b.steps.length >= o.maxAttempts) return undefined;
  if (b.steps.length === 0) return { k: Math.min(ceilK, Math.max(1, Math.ceil(o.start / o.multipleOf))), why: 'start' };
  const top = b.hi === null ? ceilK + 1 : b.hi;
  if (top - b.lo <= 1 || b.lo >= ceilK) return undefined;
  if (b.lo === 0) {
    // Nothing passed yet: halve below the smallest failure.
    const k = Math.max(1, Math.floor(top / 2));
    return k < top ? { k, why: 'halve' } : undefined;
  }
  const readings = passes(b, o.multipleOf);
  const guided = placed(readings, b, o);
  const last = b.steps.at(-1)!;
  // After a guided attempt that failed, or that the line put at the bound and passed, or that passed
  // inside a bracket it did not close, one attempt is not guided: a fit that keeps missing on one side
  // (a bending or flat curve) cannot stall the bracket.
  const missed =
    last.why.startsWith('fit') && (last.outcome !== 'ok' || last.why !== 'fit' || (b.hi !== null && top - b.lo > 2));
  if (guided !== undefined && !missed) return guided;
  if (b.hi === null) return { k: Math.min(ceilK, b.lo * GROWTH), why: 'double' };
  return { k: Math.floor((b.lo + top) / 2), why: 'bisect' };
}

/** The bracket after an attempt at multiple k. */
export function withAttempt(b: Bracket, step: BracketStep): Bracket {
  const steps = [...b.steps, step];
  if (step.outcome === 'crash' || step.outcome === 'invalid') return { ...b, steps, broken: true };
  if (step.outcome === 'ok') {
    const lo = Math.max(b.lo, step.k);
    // A pass above a failure shows that failure was the process's state, not the batch: it is dropped.
    return { lo, hi: b.hi !== null && b.hi <= lo ? null : b.hi, steps, broken: false };
  }
  return { lo: b.lo, hi: step.k > b.lo ? Math.min(b.hi ?? Infinity, step.k) : b.hi, steps, broken: false };
}

function passes(b: Bracket, m: number): Reading[] {
  return b.steps
    .filter((s) => s.outcome === 'ok' && s.bytes !== null)
    .map((s) => ({ batch: s.k * m, bytes: s.bytes! }));
}

/**
 * Where the memory line meets the cap, in multiples, inside the bracket: the line of every reading while
 * no failure is known, then the secant of the two largest passes (memory bends near the top).
 */
function placed(readings: readonly Reading[], b: Bracket, o: BracketOptions): { k: number; why: string } | undefined {
  const cap = o.capBytes;
  if (cap === null || readings.length < 2) return undefined;
  const sorted = [...readings].sort((x, y) => x.batch - y.batch);
  const fit = b.hi === null ? fitLinear(sorted) : fitLinear(sorted.slice(-2));
  if (fit === undefined || !(fit.slope > 0)) return undefined;
  const ceilK = Math.floor(o.ceiling / o.multipleOf);
  const top = b.hi ?? ceilK + 1;
  const k = Math.floor((cap - fit.intercept) / fit.slope / o.multipleOf);
  // Beyond a batch that failed, the line is contradicted: bisection takes over.
  if (k >= top) return undefined;
  // A prediction at or below what passed is itself evidence the line is low: one multiple up.
  const inside = Math.min(top - 1, Math.max(b.lo + 1, k));
  return inside > b.lo && inside < top ? { k: inside, why: k <= b.lo ? 'fit (at the bound)' : 'fit' } : undefined;
}
