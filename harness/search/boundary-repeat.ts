// repeat_boundary: the limit of a batch search is a band, not a line (an address-space cap moves with
// glibc arenas and threads; allocators and loaders differ from run to run), so a max next to a batch that
// failed is a coin flip in the training that follows, however many runs it passed. After the search, the
// max and the smallest failing batch run again `repeats` times each; a band model (harness/search/band-model.ts)
// fitted on every run of that length then places the max written: the largest multiple whose chance of
// failing a run is at most `maxRisk`. A batch below the max runs `repeats` times too; a failure there is
// more evidence, the model is fitted again and the max moves down. What ran is reported as a band, with the
// model's estimate.
import type { BoundaryBand } from '../domain/index.js';
import { countRuns, fitBand, largestWithin, riskPercent, type BandFit, type BandRun } from './band-model.js';
import type { ProbeFn, ProbeResult } from './probe.js';

export interface BoundaryInput {
  run: ProbeFn;
  /** multiple_of. */
  m: number;
  /** The max, in multiples (> 0): it passed the run that placed it. */
  lo: number;
  /** The smallest failing multiple (it failed once), or null when none failed (the ceiling). */
  hi: number | null;
  /** Runs of each boundary batch after the one that placed it. */
  repeats: number;
  /** Steps of each run (undefined: the stage's probe steps). */
  steps: number | undefined;
  /** The chance of failing a run that the max written may have, by the band model. */
  maxRisk: number;
  /**
   * Earlier runs of the same length (the confirmation, long probes), passes and OOMs: the model's first
   * evidence. The runs that placed lo and hi are taken to be among them, or are added.
   */
  known?: readonly BandRun[];
}

/** What ran at the boundary, and the band model's estimate for the max written (run.json's `band`). */
export type Band = BoundaryBand;

export interface BoundaryResult {
  /** The max written, in multiples: it passed every run of it, and its risk is within maxRisk (0: none). */
  lo: number;
  /** The smallest multiple above it that failed at least one run, or null when none did. */
  hi: number | null;
  band: Band;
  probes: ProbeResult[];
  log: string[];
  /** Repeats that timed out: left out of the band (a timeout is not a memory failure), each run again once. */
  timedOut: ProbeResult[];
}

type Tally = Map<number, { passed: number; failed: number }>;

/** Model fits before the search gives up lowering (each follows a failure at the batch it placed). */
const MAX_REFITS = 8;

export async function repeatBoundary(o: BoundaryInput): Promise<BoundaryResult> {
  const tally: Tally = new Map();
  const runs: BandRun[] = [];
  const count = (batch: number, ok: boolean) => {
    runs.push({ batch, ok });
    if (batch % o.m !== 0) return;
    const t = tally.get(batch / o.m) ?? { passed: 0, failed: 0 };
    if (ok) t.passed += 1;
    else t.failed += 1;
    tally.set(batch / o.m, t);
  };
  for (const r of o.known ?? []) count(r.batch, r.ok);
  if (!tally.get(o.lo)?.passed) count(o.lo * o.m, true);
  if (o.hi !== null && !tally.get(o.hi)?.failed) count(o.hi * o.m, false);
  const probes: ProbeResult[] = [];
  const log: string[] = [];
  const timedOut: ProbeResult[] = [];
  /** Runs multiple k up to n times; stops at its first failure when `untilFail`. */
  const runK = async (k: number, n: number, untilFail: boolean): Promise<void> => {
    let timeouts = 0;
    for (let i = 0; i < n; i++) {
      const r = await o.run(k * o.m, 'repeat', o.steps);
      probes.push(r);
      log.push(`repeat ${i + 1}/${n}: ${k * o.m} ${r.ok ? 'ok' : r.outcome}`);
      // A timeout says nothing about memory: it is not a run of the band; the repeat runs again (once).
      if (r.outcome === 'timeout') {
        timedOut.push(r);
        if (++timeouts > 1) return;
        i -= 1;
        continue;
      }
      count(k * o.m, r.ok);
      if (!r.ok && untilFail) return;
    }
  };
  // Both sides of the boundary first: whether the max fails some runs and the failure passes some tells how
  // wide the band is, and passes at the max pin the band's place for the model.
  await runK(o.lo, o.repeats, true);
  if (o.hi !== null) await runK(o.hi, o.repeats, false);
  let lo = o.lo;
  let fit: BandFit | undefined;
  let step = 1;
  for (let refit = 0; ; refit++) {
    fit = fitBand(runs);
    const fail = firstFailAbove(tally, 0);
    if (fit !== undefined && fail !== null) {
      lo = Math.min(lo, largestWithin(fit, o.maxRisk, o.m, fail));
      log.push(fitLine(fit, lo * o.m, o.maxRisk));
    }
    if (lo <= 0) break;
    if (refit >= MAX_REFITS) {
      // Out of refits: the largest batch below every failure that passed each of its runs, which ran (the
      // model's estimate then says how far its risk is over max_risk).
      lo = largestClean(tally, firstFailAbove(tally, 0));
      log.push(`band model: ${MAX_REFITS} refits, each after a failure; the max written is the largest clean batch`);
      break;
    }
    // The max written passed every one of its runs: the run that placed it and `repeats` more.
    const t = tally.get(lo) ?? { passed: 0, failed: 0 };
    const need = (lo === o.lo ? 1 : 0) + o.repeats - t.passed;
    if (need > 0) await runK(lo, need, true);
    if (!tally.get(lo)!.failed) break;
    // Failed a run: the model, fitted again, places the max below it, at least `step` lower; the step doubles
    // with each failure, so runs that contradict the model (a pass above many failures) cannot walk it down
    // one multiple per refit.
    lo = Math.max(0, lo - step);
    step *= 2;
  }
  fit = fitBand(runs);
  const { hi, band } = bandOf(tally, lo, o);
  band.runs = countRuns(runs);
  if (fit !== undefined && lo > 0)
    band.model = {
      runs: fit.runs,
      limit: fit.limit,
      spread: fit.spread,
      risk: fit.risk(lo * o.m),
      max_risk: o.maxRisk,
    };
  return { lo, hi, band, probes, log, timedOut };
}

/** The largest multiple below `fail` (null: any) that ran and passed every run, or 0. */
function largestClean(tally: Tally, fail: number | null): number {
  const clean = [...tally].filter(([k, t]) => (fail === null || k < fail) && t.passed > 0 && t.failed === 0);
  return Math.max(0, ...clean.map(([k]) => k));
}

/** The smallest multiple above `lo` that failed a run, or null. */
function firstFailAbove(tally: Tally, lo: number): number | null {
  const fails = [...tally].filter(([k, t]) => k > lo && t.failed > 0).map(([k]) => k);
  return fails.length > 0 ? Math.min(...fails) : null;
}

/** The band from what each batch did: passed every run up to `lo`, then some failures, then every run failed. */
export function bandOf(
  tally: Tally,
  lo: number,
  o: Pick<BoundaryInput, 'm' | 'repeats' | 'steps'>,
): { hi: number | null; band: Band } {
  const above = [...tally].filter(([k]) => k > lo).sort(([a], [b]) => a - b);
  const highestPass = Math.max(lo, ...above.filter(([, t]) => t.passed > 0).map(([k]) => k));
  // Every run failed, and no larger batch passed any run: the batch where the band ends.
  const allFail = above.find(([k, t]) => t.passed === 0 && k > highestPass);
  const failedSome = above.filter(([k]) => allFail === undefined || k < allFail[0]);
  const firstFail = above.find(([, t]) => t.failed > 0);
  return {
    hi: firstFail ? firstFail[0] : null,
    band: {
      repeats: o.repeats,
      passed_all: lo > 0 ? lo * o.m : null,
      failed_some: failedSome.map(([k, t]) => ({ batch: k * o.m, passed: t.passed, failed: t.failed })),
      failed_all: allFail ? allFail[0] * o.m : null,
      steps: o.steps ?? null,
    },
  };
}

/**
 * The spread's prior range once a run failed at a batch the model had placed within max_risk: that failure
 * is the evidence that the band is wider than the boundary's few runs could tell (SPREAD_MAX), so the refit
 * lets the data choose a spread up to this fraction of the batch.
 */
export const SPREAD_MAX_AFTER_FAILURE = 0.1;

/** A lowering in the band: what a batch that failed after the search was lowered to. */
export interface BandLowering {
  /** The batch that passed `repeats + 1` runs in a row with a risk within maxRisk; null when none did. */
  batch: number | null;
  /** The smallest batch that failed a run of the lowering (or the batch that failed first). */
  lowestFail: number;
  /** The model's chance that a run at `batch` fails, fitted on every run; absent when it cannot explain a failure. */
  risk?: number;
  /** Failures the model, fitted with them, puts below max_risk: not the batch's doing (no risk is given then). */
  unexplained?: number[];
  log: string[];
}

/**
 * Lowers a batch that failed after the search (a later stage's trial, or the final confirmation with the
 * final config) inside the band: the failure joins the stage's runs, the model fitted on all of them places
 * the batch (the largest multiple below every failure of this lowering whose risk is within `maxRisk`), and
 * that batch must pass `repeats + 1` runs of `run` (the config that failed) in a row. A failure there is
 * more evidence: the model is fitted again and the batch moves down at least `step`, which doubles each
 * time. The stage's own runs feed the model only: the lowered batch passes its runs under this config.
 */
export async function lowerInBand(o: {
  run: (batch: number) => Promise<boolean>;
  m: number;
  /** The batch that failed (a multiple of m). */
  failed: number;
  /** The stage's runs of confirmation length (run.json's band.runs, expanded). */
  known: readonly BandRun[];
  repeats: number;
  maxRisk: number;
  /** Runs the lowering may make. */
  budget: number;
}): Promise<BandLowering> {
  const runs: BandRun[] = [...o.known, { batch: o.failed, ok: false }];
  const log: string[] = [];
  let cap = Math.floor(o.failed / o.m);
  let step = 1;
  let made = 0;
  const ownFailures: number[] = [];
  while (made < o.budget) {
    const fit = fitBand(runs, { spreadMax: SPREAD_MAX_AFTER_FAILURE });
    // Without a pass to place the band above (the stage's runs all failed), step down as the search does.
    const k = fit ? Math.min(cap - 1, largestWithin(fit, o.maxRisk, o.m, cap)) : Math.floor((cap * 7) / 8);
    if (fit) log.push(fitLine(fit, k * o.m, o.maxRisk));
    if (k <= 0) break;
    let passed = 0;
    while (passed < o.repeats + 1 && made < o.budget) {
      made += 1;
      const ok = await o.run(k * o.m);
      runs.push({ batch: k * o.m, ok });
      log.push(`lower ${passed + 1}/${o.repeats + 1}: ${k * o.m} ${ok ? 'ok' : 'failed'}`);
      if (!ok) {
        ownFailures.push(k * o.m);
        break;
      }
      passed += 1;
    }
    const lowestFail = Math.min(o.failed, ...ownFailures);
    if (passed === o.repeats + 1) {
      const after = fitBand(runs, { spreadMax: SPREAD_MAX_AFTER_FAILURE });
      if (!after) return { batch: k * o.m, lowestFail, log };
      // A failure the model, fitted with it, still puts below max_risk is not the batch's (a worker's own
      // address space, a neighbour's memory): the model contradicts the data, so its figure for the batch
      // written is not given.
      const failures = [...new Set([o.failed, ...ownFailures])];
      const unexplained = failures.filter((b) => after.risk(b) < o.maxRisk).sort((a, b) => a - b);
      if (unexplained.length > 0) {
        log.push(`band model: it cannot explain the failure at ${unexplained.join(', ')}, so it gives no risk`);
        return { batch: k * o.m, lowestFail, unexplained, log };
      }
      return { batch: k * o.m, lowestFail, risk: after.risk(k * o.m), log };
    }
    if (runs[runs.length - 1]!.ok) break; // out of budget before the last run
    cap = Math.max(0, k - step + 1);
    step *= 2;
  }
  return { batch: null, lowestFail: Math.min(o.failed, ...ownFailures), log };
}

/** "band model over 9 runs: limit 5642 +/- 28; 5472 fails a run with chance 1.2%" (batch 0: none placed). */
function fitLine(fit: BandFit, batch: number, maxRisk: number): string {
  return (
    `band model over ${fit.runs} runs: limit ${Math.round(fit.limit)} +/- ${Math.round(fit.spread)}; ` +
    (batch > 0
      ? `${batch} fails a run with chance ${riskPercent(fit.risk(batch))}`
      : `no batch within ${riskPercent(maxRisk)}`)
  );
}
