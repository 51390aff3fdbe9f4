// The max-batch search: explore with small probes, fit memory against batch, probe around the predicted
// limit, and split what remains by the expected time to close it. It only ever reports batch sizes that ran.
// Its phases are functions (explore, close, confirm until flat, repeat the boundary; or a strategy's own
// first phase): each takes the search's state as a value (search-bracket.ts) and returns the next one.
import { powerThenBisect, shrinkOnOom } from './reference.js';
import {
  fitLinear,
  headroomUsed,
  predictLimit,
  predictWithSpread,
  type Prediction,
  type Reading,
} from './memory-fit.js';
import { repeatBoundary } from './boundary-repeat.js';
import { planProbe } from './expected-time.js';
import { remainingSeconds } from './eta.js';
import { costEstimate } from './probe-cost.js';
import type { ProbeFn, ProbeResult, ProbeRole } from './probe.js';
import {
  boundaryOf,
  confirmedAtLo,
  countedForBand,
  emptySearch,
  intoLongRuns,
  isClosed,
  logged,
  noted,
  probed,
  probeSteps,
  searchContext,
  timedOutOnce,
  type SearchBracket,
  type SearchContext,
} from './search-bracket.js';
import { answerMaxBatch } from './max-batch-answers.js';
import type { MaxBatchOptions, MaxBatchResult } from './max-batch-types.js';
import { holds } from './confirmation.js';
import type { LinearFit, StageNote } from '../domain/index.js';

export type { MaxBatchBoundary, MaxBatchOptions, MaxBatchResult, MaxBatchStrategy } from './max-batch-types.js';

/** Growth factor of the exploration phase when memory readings are available. */
const EXPLORE_GROWTH = 16;
/** Exploration ends when the readings have used this fraction of the room below the cap. */
const EXPLORE_UNTIL_USED = 0.25;
/** Readings needed before a fit may steer the search (two or three small probes, then the fit). */
const MIN_FIT_READINGS = 3;
/** Exploration goes on while the readings scatter around their line by more than this share of their span. */
const EXPLORE_UNTIL_CLEAR = 0.25;
/** The longest jump an exploring probe makes, even when the fit predicts a far limit. */
const EXPLORE_MAX_JUMP = 64;
/** A fit is trusted for a long jump only when its worst residual is below this fraction of its span. */
const FIT_TRUSTED_RESIDUAL = 0.1;
/** The chance of failing a run that the max written may have, by the band model, unless max_risk says. */
export const DEFAULT_MAX_RISK = 0.02;

/** Guided probe pairs that may miss before the search bisects only. */
const MAX_GUIDED_MISSES = 4;

/**
 * The search, then the answers: the search places the boundary (probes, confirmation, repeats) and
 * returns it as a value; the answers (recommended, fastest, latency bound) are computed after it from its
 * runs, with the few trials of their own they need (search/max-batch-answers.ts).
 */
export async function findMaxBatch(run: ProbeFn, opts: MaxBatchOptions): Promise<MaxBatchResult> {
  const ctx: Search = { ...searchContext(opts), run };
  const b = await search(ctx, emptySearch(ctx));
  return answerMaxBatch(boundaryOf(ctx, b), run, opts);
}

/** The search's context with the trial runner: what every phase is handed besides the bracket. */
interface Search extends SearchContext {
  readonly run: ProbeFn;
}

/** The phases in order: a first phase by the strategy (or a hint), close, verify, confirm, repeat. */
async function search(ctx: Search, start: SearchBracket): Promise<SearchBracket> {
  const { opts, m, ceilK } = ctx;
  let b = start;
  if (opts.hint !== undefined) {
    b = await fromHint(ctx, b, opts.hint);
  } else if (opts.knownOk !== undefined) {
    // What the neighbour showed is the lower bound; the prediction (or doubling) takes it from there.
    b = { ...b, lo: Math.min(ceilK, Math.max(0, Math.floor(opts.knownOk / m))) };
  } else if (opts.strategy === 'power-bisect' || opts.strategy === 'shrink-on-oom') {
    b = await referenceFirst(ctx, b, opts.strategy);
  } else {
    [b] = await probe(ctx, b, startK(ctx), 'explore');
    b = await explore(ctx, b);
  }
  b = await close(ctx, b);
  b = await verifyNeighbourBound(ctx, b);
  if (!b.broken && !b.stalled) b = await confirmUntilFlat(ctx, b);
  if (!b.broken && !b.stalled) b = await repeatTheBoundary(ctx, b);
  return b;
}

/** A probe at multiple k (a multiple tried already answers from its run), and the bracket after it. */
async function probe(ctx: Search, b: SearchBracket, k: number, why: string): Promise<[SearchBracket, ProbeResult]> {
  const known = b.tried.get(k);
  if (known) return [b, known];
  estimate(ctx, b);
  const [after, r] = await runTimed(ctx, b, k, 'probe', probeSteps(b));
  return [probed(ctx, after, k, r, why), r];
}

/** Tells the stage how many trials are left and how long they take. */
function estimate(ctx: Search, b: SearchBracket): void {
  const opts = ctx.opts;
  if (!opts.onEstimate) return;
  const n = estimateRemaining(ctx, b);
  const repeats = b.band === undefined && b.lo > 0 ? 2 * (opts.repeatBoundary ?? 0) : 0;
  const long = (opts.confirmSteps > 0 && !b.longOk.has(b.lo) ? 1 : 0) + repeats;
  const r = { short: Math.max(0, n - long + repeats), long };
  const seconds = opts.runLengths ? remainingSeconds(b.probes, r, opts.runLengths) : undefined;
  opts.onEstimate(r.short + r.long, seconds);
}

/** Rough count of the trials still to come: bisection of the bracket plus the closing trials. */
function estimateRemaining({ opts, m, ceilK }: Search, b: SearchBracket): number {
  const hint = opts.hint;
  // From an in-process bracket whose bound held: only its failure is left to run, when the hint is right.
  const atHint = hint?.lo != null && (b.longOk.has(b.lo) || b.lo === Math.floor(hint.lo / m));
  const hinted = atHint && hint?.hi != null && hint.hi / m > b.lo;
  const open = hinted
    ? 1
    : b.hi === ceilK + 1
      ? Math.log2(ceilK / Math.max(1, b.lo)) / 3 + 4
      : Math.log2(Math.max(1, b.hi - b.lo));
  const closing =
    (opts.confirmSteps > 0 && !b.longOk.has(b.lo) ? 1 : 0) +
    (opts.skipRecommended ? 0 : 1) +
    opts.throughputPoints +
    (opts.latency ? 2 : 0);
  return Math.ceil(open) + closing;
}

/**
 * A run that timed out says nothing about memory (a slow machine, a stall): it runs once more, and the
 * first that does not time out counts. Two in a row stop the search (`stalled`): raise limits.timeout.
 */
async function runTimed(
  ctx: Search,
  b: SearchBracket,
  k: number,
  role: ProbeRole,
  steps: number | undefined,
): Promise<[SearchBracket, ProbeResult]> {
  const first = await ctx.run(k * ctx.m, role, steps);
  if (first.outcome !== 'timeout') return [b, first];
  const after = timedOutOnce(ctx, b, k, role, first);
  const again = await ctx.run(k * ctx.m, role, steps);
  return [again.outcome === 'timeout' ? { ...after, stalled: again } : after, again];
}

/** A lower bound taken from a neighbour has not run here: it runs before it is reported. */
async function verifyNeighbourBound(ctx: Search, start: SearchBracket): Promise<SearchBracket> {
  let b = start;
  while (!b.broken && b.lo > 0 && !b.tried.has(b.lo)) {
    let r: ProbeResult;
    [b, r] = await probe(ctx, b, b.lo, "verify the neighbour's bound");
    if (r.ok) break;
    b = noted(b, { kind: 'neighbour-bound-failed', batch: r.batch, outcome: r.outcome });
    const hi = b.hi;
    b = { ...b, lo: Math.max(0, ...[...b.tried].filter(([k, p]) => p.ok && k < hi).map(([k]) => k)) };
    b = await close(ctx, b);
  }
  return b;
}

/**
 * Starts from an in-process bracket: the confirmation at its lower bound first (a fresh run until
 * memory flattens, which also verifies the bound), then its failure in a fresh process. When either
 * disagrees the search goes on from what the fresh runs showed, as it would after its own probes.
 */
async function fromHint(
  ctx: Search,
  start: SearchBracket,
  hint: NonNullable<MaxBatchOptions['hint']>,
): Promise<SearchBracket> {
  const { m, ceilK } = ctx;
  let b: SearchBracket = { ...start, readings: [...start.readings, ...hint.readings] };
  const loK = hint.lo === null ? 0 : Math.min(ceilK, Math.floor(hint.lo / m));
  if (loK > 0 && ctx.opts.confirmSteps > 0) {
    b = logged({ ...b, lo: loK }, `in-process bracket: ${loK * m} passed there; confirmed in a fresh process`);
    b = await confirmUntilFlat(ctx, b);
  } else if (loK > 0) {
    [b] = await probe(ctx, b, loK, 'in-process bound');
  }
  if (b.broken) return b;
  const hiK = hint.hi === null ? undefined : Math.floor(hint.hi / m);
  if (hiK !== undefined && hiK > b.lo && hiK <= ceilK && b.hi > hiK)
    [b] = await probe(ctx, b, hiK, 'in-process failure');
  if (b.lo === 0 && !b.tried.has(1) && b.hi > 1)
    [b] = await probe(ctx, b, Math.min(b.hi - 1, Math.max(1, loK)), 'explore');
  return b;
}

/** The first probe's multiple: start, on the grid of multiple_of, within the ceiling. */
const startK = ({ opts, m, ceilK }: Search): number => Math.min(Math.max(1, Math.ceil(opts.start / m)), ceilK);

/**
 * A reference finder (search/reference.ts) as this search's first phase, from start, each of its probes run and
 * recorded as the search's own: Lightning's BatchSizeFinder in mode binsearch (doubling until a failure, then
 * bisection to adjacent multiples), or Accelerate's find_executable_batch_size (x0.9 after each OOM until a
 * batch runs, whose pass and the OOM before it close() then bisects to exact).
 */
async function referenceFirst(
  ctx: Search,
  start: SearchBracket,
  strategy: 'power-bisect' | 'shrink-on-oom',
): Promise<SearchBracket> {
  const { m, ceilK } = ctx;
  let b = start;
  const run: ProbeFn = async (batch) => {
    let r: ProbeResult;
    [b, r] = await probe(ctx, b, Math.max(1, Math.round(batch / m)), strategy);
    return r;
  };
  const from = startK(ctx) * m;
  if (strategy === 'power-bisect') await powerThenBisect(run, { init: from, multipleOf: m, ceiling: ceilK * m });
  else await shrinkOnOom(run, { start: from, multipleOf: m });
  return b;
}

/** Guided pairs while the prediction holds, then doubling or splitting, until the bracket is closed. */
async function close(ctx: Search, start: SearchBracket): Promise<SearchBracket> {
  let b = start;
  let misses = 0;
  while (!isClosed(ctx, b)) {
    const guided = misses < MAX_GUIDED_MISSES ? predictK(ctx, b, misses) : undefined;
    if (guided === undefined) {
      b = await widenOrBisect(ctx, b);
      continue;
    }
    b = await guidedPair(ctx, b, guided);
    if (!isClosed(ctx, b)) misses += 1;
  }
  return b;
}

/** Geometric growth from the start until the readings say enough about the slope. */
async function explore(ctx: Search, start: SearchBracket): Promise<SearchBracket> {
  const { m, ceilK } = ctx;
  const cap = ctx.opts.capBytes;
  let b = start;
  while (!isClosed(ctx, b) && b.hi === ceilK + 1) {
    if (cap === null || b.readings.length === 0) return b; // no memory signal: doubling happens in widenOrBisect
    const fit = fitLinear(b.readings);
    // Leave once the readings have grown well past their own scatter and used a fair share of the room.
    const clear =
      b.readings.length >= MIN_FIT_READINGS && fit !== undefined && fit.relativeResidual <= EXPLORE_UNTIL_CLEAR;
    if (clear && headroomUsed(b.readings, cap) >= EXPLORE_UNTIL_USED) return b;
    let next = b.lo * EXPLORE_GROWTH;
    const pred = predictLimit(b.readings, cap);
    if (b.readings.length >= 3 && fit && fit.relativeResidual <= FIT_TRUSTED_RESIDUAL && pred !== undefined) {
      // The fit is trustworthy: jump to half the predicted limit, where the next reading is informative.
      next = Math.min(Math.max(next, Math.floor(pred / 2 / m)), b.lo * EXPLORE_MAX_JUMP);
    }
    next = Math.min(next, ceilK);
    if (next <= b.lo) return b;
    [b] = await probe(ctx, b, next, 'explore');
  }
  return b;
}

/** The predicted limit in multiples and its spread, or undefined when there is no usable prediction. */
function predictK({ opts, m }: Search, b: SearchBracket, misses: number): { k: number; spread: number } | undefined {
  const cap = opts.capBytes;
  const shortFit = b.mode.kind === 'long' ? b.mode.shortFit : undefined;
  let pred: Prediction | undefined;
  if (shortFit !== undefined) {
    // Runs until memory flattens cost a confirmation each: one pair where the first of them and the short
    // line predict the limit, then bisection (a walk of guided misses costs more than it saves here).
    pred = cap !== null && misses === 0 ? grownLimit(shortFit, b.readings, cap) : undefined;
    if (pred === undefined) return undefined;
  } else {
    // A prediction from outside (another card's memory line) needs no cap here.
    if (!opts.predict && (cap === null || b.readings.length < 2)) return undefined;
    pred = opts.predict ? opts.predict(b.readings) : predictWithSpread(b.readings, cap!);
  }
  if (pred === undefined || !Number.isFinite(pred.batch)) return undefined;
  // Each miss shows the prediction is less precise than it claims: widen the pair geometrically.
  // A spread of a hundredth of a multiple is rounding in an exact fit, not uncertainty.
  const spread = Math.max(Math.ceil(pred.spread / m - 0.01), misses === 0 ? 0 : 2 ** (misses - 1));
  // Inside a bracket no wider than the prediction's own spread, bisection is the better bet.
  if (spread > 0 && b.hi - b.lo <= 2 * spread + 1) return undefined;
  const k = Math.floor(pred.batch / m);
  // A predicted limit beyond a batch that already failed means the model is wrong here.
  return k >= b.hi ? undefined : { k, spread };
}

/**
 * Where runs until memory flattens reach the cap, from one such run and the short probes' line: the
 * memory a long run adds grows with the batch as the short probes' batch-dependent memory does (optimizer
 * state, an eval batch, caches), so the long line goes through the short line's intercept and the long
 * reading. Undefined once two long readings make a line of their own.
 */
function grownLimit(fit: LinearFit, readings: readonly Reading[], cap: number): Prediction | undefined {
  if (readings.length !== 1) return undefined;
  const [long] = readings as [Reading];
  const slope = (long.bytes - fit.intercept) / long.batch;
  if (!(slope > 0) || long.bytes >= cap) return undefined;
  return { batch: long.batch + (cap - long.bytes) / slope, spread: 0 };
}

/**
 * Probes just under and just over the prediction. With a clean fit that is k and k + 1; with a
 * noisy one the pair sits a spread either side, and the bracket between them is then bisected.
 * A prediction below a batch that already ran is itself evidence of error: the search steps
 * past that batch by at least the spread instead.
 */
async function guidedPair(
  ctx: Search,
  start: SearchBracket,
  { k, spread }: { k: number; spread: number },
): Promise<SearchBracket> {
  const { m, ceilK } = ctx;
  let b = start;
  const step = Math.max(1, spread);
  if (k <= b.lo) return (await probe(ctx, b, Math.min(ceilK, b.lo + Math.max(step, b.lo - k)), 'past prediction'))[0];
  const under = spread === 0 ? k : k - spread;
  const over = Math.min(spread === 0 ? k + 1 : k + spread, b.hi - 1, ceilK);
  // When a failure costs no more than a run (or none has been seen), the side above goes first: if it fails, the
  // side below was needed anyway; if it runs, the prediction was low and the run below is saved.
  const c = costEstimate(b.costs);
  if (over > Math.max(under, b.lo) && under > b.lo && c.fail(over * m) <= c.ok(over * m)) {
    let above: ProbeResult;
    [b, above] = await probe(ctx, b, over, 'just over (a failure costs no more)');
    if (!isClosed(ctx, b) && !above.ok && under > b.lo) [b] = await probe(ctx, b, under, 'just under');
    return b;
  }
  // A side that falls on or outside a known bound is already answered: skip its probe.
  let first: ProbeResult | undefined;
  if (under > b.lo) [b, first] = await probe(ctx, b, under, 'just under');
  if (isClosed(ctx, b)) return b;
  if (first === undefined || first.ok) {
    if (over > Math.max(under, b.lo)) [b] = await probe(ctx, b, over, 'just over');
  } else {
    // Overshot: step back by an eighth of the bracket; an ok there is a reading close to the limit.
    const back = Math.max(b.lo + 1, b.hi - Math.ceil((b.hi - b.lo) / 8));
    if (back < b.hi) [b] = await probe(ctx, b, back, 'back off');
  }
  return b;
}

async function widenOrBisect(ctx: Search, b: SearchBracket): Promise<SearchBracket> {
  if (b.hi === ctx.ceilK + 1) return (await probe(ctx, b, Math.min(Math.max(b.lo * 2, 1), ctx.ceilK), 'double'))[0];
  return (await probe(ctx, b, split(ctx, b), 'split by expected time'))[0];
}

/**
 * The point that splits the bracket with the least expected time to close it, from what probes
 * of each outcome have cost so far: the midpoint when both cost the same, higher when an OOM is
 * cheaper than a run (harness/search/expected-time.ts).
 */
function split({ m }: Search, b: SearchBracket): number {
  const c = costEstimate(b.costs);
  return planProbe({ lo: b.lo, hi: b.hi, cost: { ok: (k) => c.ok(k * m), fail: (k) => c.fail(k * m) } }).k;
}

/**
 * Re-runs the max until its memory flattens (at least confirmSteps steps). Memory that grows with
 * steps (optimizer state, fragmentation, caches, a loader started again) can make a batch pass a
 * short probe and fail a long run; then every later probe runs until memory flattens too, and the
 * search bisects again below the failure. A run that ends still growing (at its bound) leaves the
 * max unconfirmed: it is not called one that holds.
 */
async function confirmUntilFlat(ctx: Search, start: SearchBracket): Promise<SearchBracket> {
  const steps = ctx.opts.confirmSteps;
  let b = start;
  if (steps <= 0) return b;
  while (b.lo > 0 && !b.longOk.has(b.lo)) {
    // A long probe at the max that ran without flattening is its confirmation already: not run again.
    const known = b.mode.kind === 'short' ? undefined : b.tried.get(b.lo);
    if (known?.ok && known.growth !== undefined) return b;
    estimate(ctx, b);
    let r: ProbeResult;
    [b, r] = await runTimed(ctx, b, b.lo, 'confirm', steps);
    b = { ...b, probes: [...b.probes, r] };
    if (r.outcome === 'timeout') return b;
    b = logged(countedForBand(b, r), `confirm: ${b.lo * ctx.m} ${r.ok ? (r.growth?.verdict ?? 'ok') : r.outcome}`);
    if (r.ok) return confirmedAtLo(b, r);
    b = await stepDown(ctx, intoLongRuns(ctx, b, r, steps));
    b = await close(ctx, b);
  }
  return b;
}

/**
 * After a failed run until memory flattens and with no such run passed below it: long probes step down
 * from the failure by 1/8 of it, then twice as far each time, until one passes. Its memory and the short
 * line then place the next probes (grownLimit), instead of a walk down one multiple per confirmation.
 */
async function stepDown(ctx: Search, start: SearchBracket): Promise<SearchBracket> {
  let b = start;
  for (let d = Math.max(1, Math.ceil(b.hi / 8)); b.lo === 0 && !b.broken && b.hi > 1; d *= 2) {
    const k = Math.max(1, b.hi - d);
    let r: ProbeResult;
    [b, r] = await probe(ctx, b, k, 'step down (long)');
    if (!r.ok && k === 1) return b;
  }
  return b;
}

/**
 * repeat_boundary: the smallest failure and the max run again; the band model of every run of that length
 * places the max written within max_risk, and it passed every one of its runs.
 */
async function repeatTheBoundary(ctx: Search, b: SearchBracket): Promise<SearchBracket> {
  const { opts, m, ceilK } = ctx;
  const n = opts.repeatBoundary ?? 0;
  if (n <= 0 || b.lo === 0) return b;
  const steps = opts.confirmSteps > 0 ? opts.confirmSteps : probeSteps(b);
  const r = await repeatBoundary({
    run: ctx.run,
    m,
    lo: b.lo,
    hi: b.hi <= ceilK ? b.hi : null,
    repeats: n,
    steps,
    maxRisk: opts.maxRisk ?? DEFAULT_MAX_RISK,
    known: [...b.bandRuns],
  });
  const notes: StageNote[] = r.timedOut.map((t) => ({
    kind: 'repeat-timed-out',
    batch: t.batch,
    reason: t.reason ?? null,
  }));
  if (r.lo < b.lo) {
    const model = r.band.model;
    notes.push({
      kind: 'max-lowered-by-repeats',
      batch: b.lo * m,
      failed: r.probes.some((p) => p.batch === b.lo * m && !p.ok),
      max: r.lo * m || null,
      risk: model ? { risk: model.risk, max_risk: model.max_risk } : null,
    });
  }
  // Repeats as long as the confirmation confirm the max only where its memory flattened in every one.
  const atMax = r.probes.filter((p) => p.batch === r.lo * m);
  const held = atMax.length > 0 && atMax.every((p) => p.ok && holds(p.growth));
  return {
    ...noted(logged({ ...b, probes: [...b.probes, ...r.probes] }, ...r.log), ...notes),
    longOk: r.lo > 0 && steps === opts.confirmSteps && held ? new Set(b.longOk).add(r.lo) : b.longOk,
    lo: r.lo,
    hi: r.hi !== null ? Math.min(b.hi, r.hi) : b.hi,
    band: r.band,
  };
}
