// The max-batch search's state as a value: the bracket [lo, hi) in multiples, how probes run (short, or
// until memory flattens once a confirmation failed), and every run with what it showed. Each function
// here is a pure transition (a bracket in, a new one out); the phases (max-batch.ts) run the trials and
// hand their results to these.
import { fitLinear, type Reading } from './memory-fit.js';
import type { BandRun } from './band-model.js';
import type { Band } from './boundary-repeat.js';
import { NO_COSTS, withCost, type ProbeCosts } from './probe-cost.js';
import type { ProbeResult, ProbeRole } from './probe.js';
import type { MaxBatchBoundary, MaxBatchOptions } from './max-batch-types.js';
import { holds } from './confirmation.js';
import type { LinearFit, MaxBatchStatus, MemoryGrowth, StageNote } from '../domain/index.js';

/**
 * How probes run. Short: the stage's own steps. Long, once a confirmation failed (memory grows with
 * steps): every probe runs until memory flattens (`steps` at least), and the short probes' memory line
 * (`shortFit`) predicts long runs from the first one that passes.
 */
export type ProbeMode = { kind: 'short' } | { kind: 'long'; steps: number; shortFit: LinearFit | undefined };

/** What the search is handed for its whole length: the options and the bounds in multiples. */
export interface SearchContext {
  readonly opts: MaxBatchOptions;
  /** multiple_of. */
  readonly m: number;
  /** The ceiling in multiples. */
  readonly ceilK: number;
}

export interface SearchBracket {
  /** Largest ok multiple (0: none yet). */
  readonly lo: number;
  /** Smallest failed multiple (ceilK + 1: none yet). */
  readonly hi: number;
  readonly mode: ProbeMode;
  /** The run that counts at each multiple tried. */
  readonly tried: ReadonlyMap<number, ProbeResult>;
  /** Memory against batch of the passes (of the current mode). */
  readonly readings: readonly Reading[];
  /** Every run of the search, in order. */
  readonly probes: readonly ProbeResult[];
  /** Multiples that passed a run until memory flattened (a plateau). */
  readonly longOk: ReadonlySet<number>;
  /** What search probes have cost, by outcome: bisection leans towards the cheaper one. */
  readonly costs: ProbeCosts;
  /** Runs as long as the boundary's repeats, passes and OOMs: the band model's evidence. */
  readonly bandRuns: readonly BandRun[];
  readonly log: readonly string[];
  readonly notes: readonly StageNote[];
  /** A failure that is not about size at the smallest batch: the workload is broken. */
  readonly broken?: ProbeResult;
  /** A batch that timed out twice in a row: the search stops (time is not memory; limits.timeout is too short). */
  readonly stalled?: ProbeResult;
  readonly band?: Band;
}

export function searchContext(opts: MaxBatchOptions): SearchContext {
  const ceilK = Math.floor(opts.ceiling / opts.multipleOf);
  if (ceilK < 1) throw new RangeError(`ceiling ${opts.ceiling} is below multiple_of ${opts.multipleOf}`);
  return { opts, m: opts.multipleOf, ceilK };
}

export function emptySearch(ctx: SearchContext): SearchBracket {
  return {
    lo: 0,
    hi: ctx.ceilK + 1,
    mode: { kind: 'short' },
    tried: new Map(),
    readings: [],
    probes: [],
    longOk: new Set(),
    costs: NO_COSTS,
    bandRuns: [],
    log: [],
    notes: [],
  };
}

/** The steps a probe runs: undefined for the stage's own (short mode). */
export const probeSteps = (b: SearchBracket): number | undefined => (b.mode.kind === 'long' ? b.mode.steps : undefined);

export function isClosed(ctx: SearchContext, b: SearchBracket): boolean {
  return (
    b.hi - b.lo <= 1 ||
    b.broken !== undefined ||
    b.stalled !== undefined ||
    b.probes.length >= (ctx.opts.maxProbes ?? 200)
  );
}

export const logged = (b: SearchBracket, ...lines: string[]): SearchBracket => ({ ...b, log: [...b.log, ...lines] });
export const noted = (b: SearchBracket, ...notes: StageNote[]): SearchBracket => ({
  ...b,
  notes: [...b.notes, ...notes],
});
const ran = (b: SearchBracket, r: ProbeResult): SearchBracket => ({ ...b, probes: [...b.probes, r] });

/** A run as long as the boundary's repeats: a pass or an OOM is evidence of where the band lies. */
export function countedForBand(b: SearchBracket, r: ProbeResult): SearchBracket {
  return r.outcome === 'ok' || r.outcome === 'oom'
    ? { ...b, bandRuns: [...b.bandRuns, { batch: r.batch, ok: r.ok }] }
    : b;
}

/** A first run that timed out: kept, and said not to be evidence about memory (it runs again). */
export function timedOutOnce(ctx: SearchContext, b: SearchBracket, k: number, role: ProbeRole, r: ProbeResult) {
  const after = ran(b, r);
  return noted(logged(after, `${role}: ${k * ctx.m} timed out: not evidence about memory, run again`), {
    kind: 'timed-out-rerun',
    batch: k * ctx.m,
    trial: after.probes.length,
    role,
  });
}

/** The bounds and readings after a run at multiple k; a timeout moves no bound (the search has stalled). */
function recorded(ctx: SearchContext, b: SearchBracket, k: number, r: ProbeResult): SearchBracket {
  const after = ran(b, r);
  if (r.outcome === 'timeout') return after;
  const tried = new Map(b.tried).set(k, r);
  if (!r.ok) return { ...after, tried, hi: Math.min(b.hi, k) };
  const readings = r.limitedBytes !== null ? [...b.readings, { batch: k * ctx.m, bytes: r.limitedBytes }] : b.readings;
  return { ...after, tried, lo: Math.max(b.lo, k), readings };
}

/** The bracket after a search probe at multiple k (placed by `why`). */
export function probed(ctx: SearchContext, b: SearchBracket, k: number, r: ProbeResult, why: string): SearchBracket {
  const long = b.mode.kind === 'long';
  let next = recorded(ctx, b, k, r);
  if (long || ctx.opts.confirmSteps <= 0) next = countedForBand(next, r);
  if (!long && ctx.opts.placeBy !== 'count')
    next = { ...next, costs: withCost(next.costs, k * ctx.m, r.ok, r.seconds ?? null) };
  if (r.ok && long && holds(r.growth)) next = { ...next, longOk: new Set(next.longOk).add(k) };
  next = logged(next, `${why}: ${k * ctx.m} ${r.ok ? 'ok' : r.outcome}`);
  // A failure that is not about size (a crash at the smallest batch) means the workload is broken.
  if (!r.ok && r.outcome !== 'oom' && r.outcome !== 'timeout' && next.lo === 0) next = { ...next, broken: r };
  return next;
}

/** A confirmation that passed at lo: a plateau confirms it; a bound that had not run here (a bracket's) ran now. */
export function confirmedAtLo(b: SearchBracket, r: ProbeResult): SearchBracket {
  return {
    ...b,
    longOk: holds(r.growth) ? new Set(b.longOk).add(b.lo) : b.longOk,
    tried: b.tried.has(b.lo) ? b.tried : new Map(b.tried).set(b.lo, r),
  };
}

/**
 * A confirmation at lo failed: memory grows with steps. From here probes run until memory flattens
 * (at least `steps`); short-run successes say nothing about long runs, short-run failures still hold,
 * and the short probes' memory line stays to predict long runs from the first one that passes.
 */
export function intoLongRuns(ctx: SearchContext, b: SearchBracket, r: ProbeResult, steps: number): SearchBracket {
  const first = b.mode.kind === 'short';
  const hi = b.lo;
  const tried = new Map([...b.tried].filter(([, p]) => !p.ok));
  tried.set(hi, r);
  const shortFit = b.mode.kind === 'long' && b.mode.shortFit !== undefined ? b.mode.shortFit : fitLinear(b.readings);
  const next: SearchBracket = {
    ...b,
    mode: { kind: 'long', steps, shortFit },
    hi,
    tried,
    readings: [],
    lo: Math.max(0, ...[...b.longOk].filter((k) => k < hi)),
  };
  return first ? noted(next, { kind: 'grows-with-steps', batch: b.lo * ctx.m, outcome: r.outcome, steps }) : next;
}

/** What the runs at the max showed of its memory: a plateau when one did, else the last verdict. */
function growthAt(b: SearchBracket, max: number | null): MemoryGrowth | null {
  const runs = b.probes.filter((p) => p.ok && p.batch === max && p.growth !== undefined).map((p) => p.growth!);
  return runs.find((g) => holds(g)) ?? runs.at(-1) ?? null;
}

/** The notes of how the search ended: a stall, a broken workload, nothing fits, the ceiling, the probe limit. */
function endNotes(ctx: SearchContext, b: SearchBracket, status: MaxBatchStatus, max: number | null): StageNote[] {
  const out: StageNote[] = [];
  if (b.stalled) out.push({ kind: 'search-stalled', batch: b.stalled.batch, reason: b.stalled.reason ?? null });
  if (b.broken) {
    const { batch, outcome, reason, error } = b.broken;
    out.push({ kind: 'workload-broken', batch, outcome, reason: reason ?? null, ...(error ? { error } : {}) });
  }
  if (status === 'none-fits') out.push({ kind: 'none-fits', smallest: Math.min(...b.probes.map((p) => p.batch)) });
  if (status === 'ceiling' && max !== null) out.push({ kind: 'ceiling', max });
  const limit = ctx.opts.maxProbes ?? 200;
  if (b.probes.length >= limit) out.push({ kind: 'probe-limit', probes: limit });
  return out;
}

/** The search's outcome as a value: the boundary it found, its notes and every run it made. */
export function boundaryOf(ctx: SearchContext, b: SearchBracket): MaxBatchBoundary {
  const status: MaxBatchStatus =
    b.broken || b.stalled ? 'failed' : b.lo === 0 ? 'none-fits' : b.hi === ctx.ceilK + 1 ? 'ceiling' : 'exact';
  // A stalled search has no answer: the batch above what passed was never measured.
  const max = b.lo > 0 && !b.stalled ? b.lo * ctx.m : null;
  const memoryGrowth = growthAt(b, max);
  const unproven: StageNote | undefined =
    max !== null && memoryGrowth && !holds(memoryGrowth)
      ? { kind: 'not-proven-to-hold', batch: max, growth: memoryGrowth }
      : undefined;
  return {
    status,
    max,
    largestOk: max,
    smallestFail: b.hi <= ctx.ceilK ? b.hi * ctx.m : null,
    // Every trial that located the max, including failed confirmations; not the passing confirmation.
    probesToMax: b.probes.filter((p) => p.role === 'probe' || (p.role === 'confirm' && !p.ok)).length,
    confirmed: b.lo > 0 && b.longOk.has(b.lo),
    memoryGrowth,
    log: [...b.log],
    notes: [...b.notes, ...endNotes(ctx, b, status, max), ...(unproven ? [unproven] : [])],
    probes: [...b.probes],
    ...(b.readings.length >= 2 ? { fit: fitLinear(b.readings)! } : {}),
    ...(b.band ? { band: b.band } : {}),
  };
}
