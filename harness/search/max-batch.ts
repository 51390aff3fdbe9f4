// The max-batch search: explore with small probes, fit memory against batch, probe around the predicted
// limit, and split what remains by the expected time to close it. It only ever reports batch sizes that ran.
import { powerThenBisect } from './reference.js';
import {
  fitLinear,
  headroomUsed,
  predictLimit,
  predictWithSpread,
  type Prediction,
  type Reading,
} from './memory-fit.js';
import { riskPercent, type BandRun } from './band-model.js';
import { repeatBoundary, type Band } from './boundary-repeat.js';
import { planProbe } from './expected-time.js';
import { remainingSeconds } from './eta.js';
import { ProbeCosts } from './probe-cost.js';
import type { ProbeFn, ProbeResult, ProbeRole } from './probe.js';
import { answerMaxBatch } from './max-batch-answers.js';
import type { MaxBatchBoundary, MaxBatchOptions, MaxBatchResult } from './max-batch-types.js';
import { growthNote, holds } from './confirmation.js';
import { exceptionText, type LinearFit, type MaxBatchStatus, type MemoryGrowth } from '../domain/index.js';

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
  const s = new SearchState(run, opts);
  await s.search();
  return answerMaxBatch(s.boundary(), run, opts);
}

class SearchState {
  readonly m: number;
  readonly ceilK: number;
  /** Largest ok multiple (0: none yet) and smallest failed multiple (ceilK + 1: none yet). */
  lo = 0;
  hi: number;
  readonly readings: Reading[] = [];
  readonly probes: ProbeResult[] = [];
  readonly tried = new Map<number, ProbeResult>();
  readonly log: string[] = [];
  readonly notes: string[] = [];
  probesToMax = 0;
  broken: ProbeResult | undefined;
  /** A batch that timed out twice in a row: the search stops (time is not memory; limits.timeout is too short). */
  stalled: ProbeResult | undefined;
  /** Steps per probe once a confirmation has failed (undefined: the stage's own). */
  probeSteps: number | undefined;
  /** Multiples that passed a run until memory flattened (a plateau). */
  readonly longOk = new Set<number>();
  /**
   * The line of the short probes' memory, kept when a confirmation fails: from then on `readings` hold
   * the runs until memory flattens, and one of them with this line predicts where long runs fail.
   */
  shortFit: LinearFit | undefined;
  /** What search probes have cost, by outcome: bisection leans towards the cheaper one. */
  readonly costs = new ProbeCosts();
  band: Band | undefined;
  /** Runs as long as the boundary's repeats, passes and OOMs: the band model's evidence. */
  readonly bandRuns: BandRun[] = [];

  constructor(
    private readonly run: ProbeFn,
    readonly opts: MaxBatchOptions,
  ) {
    this.m = opts.multipleOf;
    this.ceilK = Math.floor(opts.ceiling / opts.multipleOf);
    if (this.ceilK < 1) throw new RangeError(`ceiling ${opts.ceiling} is below multiple_of ${opts.multipleOf}`);
    this.hi = this.ceilK + 1;
  }

  private get closed(): boolean {
    return (
      this.hi - this.lo <= 1 ||
      this.broken !== undefined ||
      this.stalled !== undefined ||
      this.probes.length >= (this.opts.maxProbes ?? 200)
    );
  }

  async probe(k: number, why: string): Promise<ProbeResult> {
    const known = this.tried.get(k);
    if (known) return known;
    this.estimate();
    const r = await this.runTimed(k, 'probe', this.probeSteps);
    this.record(k, r);
    if (this.probeSteps !== undefined || this.opts.confirmSteps <= 0) this.countForBand(r);
    if (this.probeSteps === undefined && this.opts.placeBy !== 'count')
      this.costs.add(k * this.m, r.ok, r.seconds ?? null);
    if (r.ok && this.probeSteps !== undefined && holds(r.growth)) this.longOk.add(k);
    this.log.push(`${why}: ${k * this.m} ${r.ok ? 'ok' : r.outcome}`);
    // A failure that is not about size (a crash at the smallest batch) means the workload is broken.
    if (!r.ok && r.outcome !== 'oom' && r.outcome !== 'timeout' && this.lo === 0) this.broken = r;
    return r;
  }

  /** Tells the stage how many trials are left and how long they take (by default, the search's own count). */
  private estimate(rest?: { short: number; long: number }): void {
    if (!this.opts.onEstimate) return;
    const n = this.estimateRemaining();
    const repeats = this.band === undefined && this.lo > 0 ? 2 * (this.opts.repeatBoundary ?? 0) : 0;
    const long = (this.opts.confirmSteps > 0 && !this.longOk.has(this.lo) ? 1 : 0) + repeats;
    const r = rest ?? { short: Math.max(0, n - long + repeats), long };
    const seconds = this.opts.runLengths ? remainingSeconds(this.probes, r, this.opts.runLengths) : undefined;
    this.opts.onEstimate(r.short + r.long, seconds);
  }

  /** Rough count of the trials still to come: bisection of the bracket plus the closing trials. */
  private estimateRemaining(): number {
    const hint = this.opts.hint;
    // From an in-process bracket whose bound held: only its failure is left to run, when the hint is right.
    const atHint = hint?.lo != null && (this.longOk.has(this.lo) || this.lo === Math.floor(hint.lo / this.m));
    const hinted = atHint && hint?.hi != null && hint.hi / this.m > this.lo;
    const open = hinted
      ? 1
      : this.hi === this.ceilK + 1
        ? Math.log2(this.ceilK / Math.max(1, this.lo)) / 3 + 4
        : Math.log2(Math.max(1, this.hi - this.lo));
    const closing =
      (this.opts.confirmSteps > 0 && !this.longOk.has(this.lo) ? 1 : 0) +
      (this.opts.skipRecommended ? 0 : 1) +
      this.opts.throughputPoints +
      (this.opts.latency ? 2 : 0);
    return Math.ceil(open) + closing;
  }

  /**
   * A run that timed out says nothing about memory (a slow machine, a stall): it runs once more, and the
   * first that does not time out counts. Two in a row stop the search (`stalled`): raise limits.timeout.
   */
  private async runTimed(k: number, role: ProbeRole, steps: number | undefined): Promise<ProbeResult> {
    const first = await this.run(k * this.m, role, steps);
    if (first.outcome !== 'timeout') return first;
    this.probes.push(first);
    this.log.push(`${role}: ${k * this.m} timed out: not evidence about memory, run again`);
    this.notes.push(
      `batch ${k * this.m} timed out in a ${role === 'probe' ? 'probe' : `${role} run`} (trial ${this.probes.length}); ` +
        'a timeout says nothing about memory, so it ran again and that run counts',
    );
    const again = await this.run(k * this.m, role, steps);
    if (again.outcome === 'timeout') this.stalled = again;
    return again;
  }

  private record(k: number, r: ProbeResult): void {
    this.probes.push(r);
    if (r.outcome === 'timeout') return; // stalled: the search ends, no bound moves
    this.tried.set(k, r);
    if (r.ok) {
      this.lo = Math.max(this.lo, k);
      if (r.limitedBytes !== null) this.readings.push({ batch: k * this.m, bytes: r.limitedBytes });
    } else {
      this.hi = Math.min(this.hi, k);
    }
  }

  async search(): Promise<void> {
    if (this.opts.hint !== undefined) {
      await this.fromHint(this.opts.hint);
    } else if (this.opts.knownOk !== undefined) {
      // What the neighbour showed is the lower bound; the prediction (or doubling) takes it from there.
      this.lo = Math.min(this.ceilK, Math.max(0, Math.floor(this.opts.knownOk / this.m)));
    } else if (this.opts.strategy === 'power-bisect') {
      await this.powerThenBisect();
    } else {
      const startK = Math.min(Math.max(1, Math.ceil(this.opts.start / this.m)), this.ceilK);
      await this.probe(startK, 'explore');
      await this.explore();
    }
    await this.close();
    // A lower bound taken from a neighbour has not run here: it runs before it is reported.
    while (!this.broken && this.lo > 0 && !this.tried.has(this.lo)) {
      const r = await this.probe(this.lo, "verify the neighbour's bound");
      if (r.ok) break;
      this.notes.push(
        `batch ${r.batch} failed (${r.outcome}) although a neighbouring bucket's max showed it should fit: ` +
          'memory is not monotone in the bucket parameter here, so this bucket was searched from below',
      );
      this.lo = Math.max(0, ...[...this.tried].filter(([k, p]) => p.ok && k < this.hi).map(([k]) => k));
      await this.close();
    }
    if (!this.broken && !this.stalled) await this.confirm();
    if (!this.broken && !this.stalled) await this.repeatBoundary();
    // Every trial that located the max, including failed confirmations; not the passing confirmation.
    this.probesToMax = this.probes.filter((p) => p.role === 'probe' || (p.role === 'confirm' && !p.ok)).length;
  }

  /**
   * Starts from an in-process bracket: the confirmation at its lower bound first (a fresh run until
   * memory flattens, which also verifies the bound), then its failure in a fresh process. When either
   * disagrees the search goes on from what the fresh runs showed, as it would after its own probes.
   */
  private async fromHint(hint: NonNullable<MaxBatchOptions['hint']>): Promise<void> {
    this.readings.push(...hint.readings);
    const loK = hint.lo === null ? 0 : Math.min(this.ceilK, Math.floor(hint.lo / this.m));
    if (loK > 0 && this.opts.confirmSteps > 0) {
      this.lo = loK;
      this.log.push(`in-process bracket: ${loK * this.m} passed there; confirmed in a fresh process`);
      await this.confirm();
    } else if (loK > 0) {
      await this.probe(loK, 'in-process bound');
    }
    if (this.broken) return;
    const hiK = hint.hi === null ? undefined : Math.floor(hint.hi / this.m);
    if (hiK !== undefined && hiK > this.lo && hiK <= this.ceilK && this.hi > hiK)
      await this.probe(hiK, 'in-process failure');
    if (this.lo === 0 && !this.tried.has(1) && this.hi > 1)
      await this.probe(Math.min(this.hi - 1, Math.max(1, loK)), 'explore');
  }

  /**
   * Lightning's BatchSizeFinder (mode binsearch) as this search's first phase: doubling from start until a
   * failure, then bisection to adjacent multiples, each probe run and recorded as the search's own.
   */
  private async powerThenBisect(): Promise<void> {
    const m = this.m;
    const startK = Math.min(Math.max(1, Math.ceil(this.opts.start / m)), this.ceilK);
    await powerThenBisect((batch) => this.probe(Math.max(1, Math.round(batch / m)), 'power-then-bisect'), {
      init: startK * m,
      multipleOf: m,
      ceiling: this.ceilK * m,
    });
  }

  /** Guided pairs while the prediction holds, then doubling or splitting, until the bracket is closed. */
  private async close(): Promise<void> {
    let misses = 0;
    while (!this.closed) {
      const guided = misses < MAX_GUIDED_MISSES ? this.predictK(misses) : undefined;
      if (guided === undefined) {
        await this.widenOrBisect();
        continue;
      }
      await this.guidedPair(guided);
      if (!this.closed) misses += 1;
    }
  }

  /** Geometric growth from the start until the readings say enough about the slope. */
  private async explore(): Promise<void> {
    while (!this.closed && this.hi === this.ceilK + 1) {
      const cap = this.opts.capBytes;
      if (cap === null || this.readings.length === 0) return; // no memory signal: doubling happens in widenOrBisect
      const fit = fitLinear(this.readings);
      // Leave once the readings have grown well past their own scatter and used a fair share of the room.
      const clear =
        this.readings.length >= MIN_FIT_READINGS && fit !== undefined && fit.relativeResidual <= EXPLORE_UNTIL_CLEAR;
      if (clear && headroomUsed(this.readings, cap) >= EXPLORE_UNTIL_USED) return;
      let next = this.lo * EXPLORE_GROWTH;
      const pred = predictLimit(this.readings, cap);
      if (this.readings.length >= 3 && fit && fit.relativeResidual <= FIT_TRUSTED_RESIDUAL && pred !== undefined) {
        // The fit is trustworthy: jump to half the predicted limit, where the next reading is informative.
        next = Math.min(Math.max(next, Math.floor(pred / 2 / this.m)), this.lo * EXPLORE_MAX_JUMP);
      }
      next = Math.min(next, this.ceilK);
      if (next <= this.lo) return;
      await this.probe(next, 'explore');
    }
  }

  /** The predicted limit in multiples and its spread, or undefined when there is no usable prediction. */
  private predictK(misses: number): { k: number; spread: number } | undefined {
    const cap = this.opts.capBytes;
    let pred: Prediction | undefined;
    if (this.shortFit !== undefined) {
      // Runs until memory flattens cost a confirmation each: one pair where the first of them and the short
      // line predict the limit, then bisection (a walk of guided misses costs more than it saves here).
      pred = cap !== null && misses === 0 ? this.grownLimit(cap) : undefined;
      if (pred === undefined) return undefined;
    } else {
      // A prediction from outside (another card's memory line) needs no cap here.
      if (!this.opts.predict && (cap === null || this.readings.length < 2)) return undefined;
      pred = this.opts.predict ? this.opts.predict(this.readings) : predictWithSpread(this.readings, cap!);
    }
    if (pred === undefined || !Number.isFinite(pred.batch)) return undefined;
    // Each miss shows the prediction is less precise than it claims: widen the pair geometrically.
    // A spread of a hundredth of a multiple is rounding in an exact fit, not uncertainty.
    const spread = Math.max(Math.ceil(pred.spread / this.m - 0.01), misses === 0 ? 0 : 2 ** (misses - 1));
    // Inside a bracket no wider than the prediction's own spread, bisection is the better bet.
    if (spread > 0 && this.hi - this.lo <= 2 * spread + 1) return undefined;
    const k = Math.floor(pred.batch / this.m);
    // A predicted limit beyond a batch that already failed means the model is wrong here.
    return k >= this.hi ? undefined : { k, spread };
  }

  /**
   * Where runs until memory flattens reach the cap, from one such run and the short probes' line: the
   * memory a long run adds grows with the batch as the short probes' batch-dependent memory does (optimizer
   * state, an eval batch, caches), so the long line goes through the short line's intercept and the long
   * reading. Undefined before a confirmation failed, or once two long readings make a line of their own.
   */
  private grownLimit(cap: number): Prediction | undefined {
    const fit = this.shortFit;
    if (fit === undefined || this.readings.length !== 1) return undefined;
    const [long] = this.readings as [Reading];
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
  private async guidedPair({ k, spread }: { k: number; spread: number }): Promise<void> {
    const step = Math.max(1, spread);
    if (k <= this.lo) {
      await this.probe(Math.min(this.ceilK, this.lo + Math.max(step, this.lo - k)), 'past prediction');
      return;
    }
    const under = spread === 0 ? k : k - spread;
    const over = Math.min(spread === 0 ? k + 1 : k + spread, this.hi - 1, this.ceilK);
    // When a failure costs no more than a run (or none has been seen), the side above goes first: if it fails, the
    // side below was needed anyway; if it runs, the prediction was low and the run below is saved.
    const c = this.costs.estimate();
    if (over > Math.max(under, this.lo) && under > this.lo && c.fail(over * this.m) <= c.ok(over * this.m)) {
      const above = await this.probe(over, 'just over (a failure costs no more)');
      if (!this.closed && !above.ok && under > this.lo) await this.probe(under, 'just under');
      return;
    }
    // A side that falls on or outside a known bound is already answered: skip its probe.
    const first = under > this.lo ? await this.probe(under, 'just under') : undefined;
    if (this.closed) return;
    if (first === undefined || first.ok) {
      if (over > Math.max(under, this.lo)) await this.probe(over, 'just over');
    } else {
      // Overshot: step back by an eighth of the bracket; an ok there is a reading close to the limit.
      const back = Math.max(this.lo + 1, this.hi - Math.ceil((this.hi - this.lo) / 8));
      if (back < this.hi) await this.probe(back, 'back off');
    }
  }

  private async widenOrBisect(): Promise<void> {
    if (this.hi === this.ceilK + 1) {
      const next = Math.min(Math.max(this.lo * 2, 1), this.ceilK);
      await this.probe(next, 'double');
      return;
    }
    await this.probe(this.split(), 'split by expected time');
  }

  /**
   * The point that splits the bracket with the least expected time to close it, from what probes
   * of each outcome have cost so far: the midpoint when both cost the same, higher when an OOM is
   * cheaper than a run (harness/search/expected-time.ts).
   */
  private split(): number {
    const c = this.costs.estimate();
    return planProbe({
      lo: this.lo,
      hi: this.hi,
      cost: { ok: (k) => c.ok(k * this.m), fail: (k) => c.fail(k * this.m) },
    }).k;
  }

  /**
   * Re-runs the max until its memory flattens (at least confirmSteps steps). Memory that grows with
   * steps (optimizer state, fragmentation, caches, a loader started again) can make a batch pass a
   * short probe and fail a long run; then every later probe runs until memory flattens too, and the
   * search bisects again below the failure. A run that ends still growing (at its bound) leaves the
   * max unconfirmed: it is not called one that holds.
   */
  private async confirm(): Promise<void> {
    const steps = this.opts.confirmSteps;
    if (steps <= 0) return;
    while (this.lo > 0 && !this.longOk.has(this.lo)) {
      // A long probe at the max that ran without flattening is its confirmation already: not run again.
      const known = this.probeSteps === undefined ? undefined : this.tried.get(this.lo);
      if (known?.ok && known.growth !== undefined) return;
      this.estimate();
      const r = await this.runTimed(this.lo, 'confirm', steps);
      this.probes.push(r);
      if (r.outcome === 'timeout') return;
      this.countForBand(r);
      this.log.push(`confirm: ${this.lo * this.m} ${r.ok ? (r.growth?.verdict ?? 'ok') : r.outcome}`);
      if (r.ok) {
        if (holds(r.growth)) this.longOk.add(this.lo);
        // A bound that had not run here yet (an in-process bracket's) ran now.
        if (!this.tried.has(this.lo)) this.tried.set(this.lo, r);
        return;
      }
      if (this.probeSteps === undefined) {
        this.notes.push(
          `batch ${this.lo * this.m} passed its probe but failed its confirmation (${r.outcome}): ` +
            'memory grows with steps, so the search went on with probes that run until memory flattens ' +
            `(at least ${steps} steps)`,
        );
      }
      this.probeSteps = steps;
      this.hi = this.lo;
      // Short-run successes say nothing about long runs; short-run failures still hold. The short probes'
      // memory line stays to predict long runs from the first one that passes.
      for (const [k, p] of this.tried) if (p.ok) this.tried.delete(k);
      this.tried.set(this.hi, r);
      this.shortFit ??= fitLinear(this.readings);
      this.readings.length = 0;
      this.lo = Math.max(0, ...[...this.longOk].filter((k) => k < this.hi));
      await this.stepDown();
      await this.close();
    }
  }

  /**
   * After a failed run until memory flattens and with no such run passed below it: long probes step down
   * from the failure by 1/8 of it, then twice as far each time, until one passes. Its memory and the short
   * line then place the next probes (grownLimit), instead of a walk down one multiple per confirmation.
   */
  private async stepDown(): Promise<void> {
    for (let d = Math.max(1, Math.ceil(this.hi / 8)); this.lo === 0 && !this.broken && this.hi > 1; d *= 2) {
      const k = Math.max(1, this.hi - d);
      if (!(await this.probe(k, 'step down (long)')).ok && k === 1) return;
    }
  }

  /** A run as long as the boundary's repeats: a pass or an OOM is evidence of where the band lies. */
  private countForBand(r: ProbeResult): void {
    if (r.outcome === 'ok' || r.outcome === 'oom') this.bandRuns.push({ batch: r.batch, ok: r.ok });
  }

  /**
   * repeat_boundary: the smallest failure and the max run again; the band model of every run of that length
   * places the max written within max_risk, and it passed every one of its runs.
   */
  private async repeatBoundary(): Promise<void> {
    const n = this.opts.repeatBoundary ?? 0;
    if (n <= 0 || this.lo === 0) return;
    const steps = this.opts.confirmSteps > 0 ? this.opts.confirmSteps : this.probeSteps;
    const hi = this.hi <= this.ceilK ? this.hi : null;
    const b = await repeatBoundary({
      run: this.run,
      m: this.m,
      lo: this.lo,
      hi,
      repeats: n,
      steps,
      maxRisk: this.opts.maxRisk ?? DEFAULT_MAX_RISK,
      known: this.bandRuns,
    });
    this.probes.push(...b.probes);
    this.log.push(...b.log);
    for (const t of b.timedOut)
      this.notes.push(
        `a boundary repeat at ${t.batch} timed out (${t.reason ?? 'limits.timeout'}): a timeout says nothing about ` +
          'memory, so it is left out of the band and the repeat ran again',
      );
    if (b.lo < this.lo) {
      const failed = b.probes.some((p) => p.batch === this.lo * this.m && !p.ok);
      const model = b.band.model;
      this.notes.push(
        failed
          ? `batch ${this.lo * this.m} failed a repeat: the max written is ${b.lo * this.m || 'none'}`
          : `batch ${this.lo * this.m} passed every run, but sits in the band where identical runs fail: the max written is ${b.lo * this.m || 'none'}`,
      );
      if (model)
        this.notes[this.notes.length - 1] +=
          `, whose chance of failing a run the band model puts at ${riskPercent(model.risk)} ` +
          `(at most ${riskPercent(model.max_risk)}, max_risk)`;
    }
    // Repeats as long as the confirmation confirm the max only where its memory flattened in every one.
    const atMax = b.probes.filter((p) => p.batch === b.lo * this.m);
    const held = atMax.length > 0 && atMax.every((p) => p.ok && holds(p.growth));
    if (b.lo > 0 && steps === this.opts.confirmSteps && held) this.longOk.add(b.lo);
    this.lo = b.lo;
    if (b.hi !== null) this.hi = Math.min(this.hi, b.hi);
    this.band = b.band;
  }

  /** What the runs at the max showed of its memory: a plateau when one did, else the last verdict. */
  private growthAt(max: number | null): MemoryGrowth | null {
    const runs = this.probes.filter((p) => p.ok && p.batch === max && p.growth !== undefined).map((p) => p.growth!);
    return runs.find((g) => holds(g)) ?? runs.at(-1) ?? null;
  }

  /** The search's outcome as a value: the boundary it found, its notes and every run it made. */
  boundary(): MaxBatchBoundary {
    if (this.stalled)
      this.notes.push(
        `batch ${this.stalled.batch} timed out twice in a row (${this.stalled.reason ?? 'limits.timeout'}): a timeout says ` +
          'nothing about memory, so the search stopped rather than take it for a failure; raise limits.timeout ' +
          '(a run until memory flattens takes the warm-up plus up to confirm_max_steps steps)',
      );
    const status: MaxBatchStatus =
      this.broken || this.stalled
        ? 'failed'
        : this.lo === 0
          ? 'none-fits'
          : this.hi === this.ceilK + 1
            ? 'ceiling'
            : 'exact';
    // A stalled search has no answer: the batch above what passed was never measured.
    const max = this.lo > 0 && !this.stalled ? this.lo * this.m : null;
    if (this.broken) {
      const e = this.broken.error;
      const why = e ? exceptionText(e) : (this.broken.reason ?? '');
      this.notes.push(
        `the workload failed at batch ${this.broken.batch} (${this.broken.outcome}${why ? `: ${why}` : ''}); fix it before tuning`,
      );
    }
    if (status === 'none-fits') {
      const smallest = Math.min(...this.probes.map((p) => p.batch));
      this.notes.push(
        `no batch fits: the smallest batch probed, ${smallest}, ran out of memory; lower start or multiple_of, ` +
          'raise limits.memory, or make the model smaller',
      );
    }
    if (status === 'ceiling')
      this.notes.push(
        `every probe up to the ceiling ${max} fit; the true max is at least ${max} (raise ceiling to search further)`,
      );
    if (this.probes.length >= (this.opts.maxProbes ?? 200))
      this.notes.push('stopped at the probe limit before the bracket closed');
    const memoryGrowth = this.growthAt(max);
    const unproven = max !== null && memoryGrowth ? growthNote(max, memoryGrowth) : undefined;
    if (unproven) this.notes.push(unproven);
    return {
      status,
      max,
      largestOk: max,
      smallestFail: this.hi <= this.ceilK ? this.hi * this.m : null,
      probesToMax: this.probesToMax,
      confirmed: this.lo > 0 && this.longOk.has(this.lo),
      memoryGrowth,
      log: [...this.log],
      notes: [...this.notes],
      probes: [...this.probes],
      ...(this.readings.length >= 2 ? { fit: fitLinear(this.readings)! } : {}),
      ...(this.band ? { band: this.band } : {}),
    };
  }
}
