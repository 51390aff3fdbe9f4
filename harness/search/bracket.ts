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
  const back = backOff(b);
  if (back !== undefined) return back;
  const k = lineK(readings, b, o);
  const last = b.steps.at(-1)!;
  // A back-off that passed lands next to the boundary as a rule: the multiple just over it first.
  if (last.why === 'back off' && last.outcome === 'ok' && b.lo + 1 < top) return { k: b.lo + 1, why: 'just over' };
  // After a placed attempt that failed, or that passed inside a bracket it did not close, one attempt is
  // not placed: a line that keeps missing on one side (a bending curve) cannot stall the bracket.
  const missed = last.why === 'fit' && (last.outcome !== 'ok' || (b.hi !== null && top - b.lo > 2));
  if (k !== undefined && k > b.lo && k < top && !missed) return { k, why: 'fit' };
  if (b.hi === null && k !== undefined && k <= b.lo) {
    // The line puts the max at or below what passed: the cap understates the room. Gallop up from the
    // bound, BACK_OFF of the batch and twice as far after each pass, rather than doubling the batch.
    const run = b.steps
      .slice()
      .reverse()
      .findIndex((s) => !(s.outcome === 'ok' && s.why === 'gallop'));
    const n = run < 0 ? b.steps.length : run;
    return { k: Math.min(ceilK, b.lo + Math.max(1, Math.ceil(BACK_OFF * b.lo)) * 2 ** n), why: 'gallop' };
  }
  if (b.hi === null) return { k: Math.min(ceilK, b.lo * GROWTH), why: 'double' };
  return { k: Math.floor((b.lo + top) / 2), why: 'bisect' };
}

/** Back-off below a failure the line placed, as a share of the batch: the cap's usual error (context, reserve). */
const BACK_OFF = 0.01;

/**
 * After the line placed an attempt that failed (the cap overstates what the workload can use: the device
 * context, the allocator's reserve), step down from it by BACK_OFF of the batch, twice as far after each
 * failed step: the max is usually just below, where bisection from far below would take many attempts.
 */
function backOff(b: Bracket): { k: number; why: string } | undefined {
  let i = b.steps.length - 1;
  let failedBacks = 0;
  while (i >= 0 && b.steps[i]!.why === 'back off' && b.steps[i]!.outcome !== 'ok') {
    failedBacks += 1;
    i -= 1;
  }
  const placedFail = b.steps[i];
  if (!placedFail || placedFail.why !== 'fit' || placedFail.outcome === 'ok' || b.hi === null) return undefined;
  if (failedBacks > 0 && b.steps.at(-1)!.outcome === 'ok') return undefined;
  const d = Math.max(1, Math.ceil(BACK_OFF * placedFail.k)) * 2 ** failedBacks;
  const k = Math.max(b.lo + 1, b.hi - d);
  return k < b.hi && k > b.lo ? { k, why: 'back off' } : undefined;
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
 * Where the memory line meets the cap, in multiples: the line of every reading while no failure is
 * known, then the secant of the two largest passes (memory bends near the top). Undefined without a
 * cap, two readings or a rising line.
 */
function lineK(readings: readonly Reading[], b: Bracket, o: BracketOptions): number | undefined {
  const cap = o.capBytes;
  if (cap === null || readings.length < 2) return undefined;
  const sorted = [...readings].sort((x, y) => x.batch - y.batch);
  const fit = b.hi === null ? fitLinear(sorted) : fitLinear(sorted.slice(-2));
  if (fit === undefined || !(fit.slope > 0)) return undefined;
  return Math.floor((cap - fit.intercept) / fit.slope / o.multipleOf);
}
