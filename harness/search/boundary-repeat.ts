// repeat_boundary: the limit of a batch search is a band, not a line (an address-space cap moves with
// glibc arenas and threads; allocators and loaders differ from run to run). After the search, the max
// and the smallest failing batch each run again `repeats` times under identical settings; a max that
// fails a repeat is stepped down (1, 2, 4 ... multiples) until one passes every run, then the gap to the
// failure is bisected, so the max written passed every repeat and the next multiple failed a run. What ran is reported as a band.
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
}

export interface Band {
  repeats: number;
  passed_all: number | null;
  failed_some: { batch: number; passed: number; failed: number }[];
  failed_all: number | null;
  steps: number | null;
}

export interface BoundaryResult {
  /** The largest multiple that passed every run of it (0: none). */
  lo: number;
  /** The smallest multiple above it that failed at least one run, or null when none did. */
  hi: number | null;
  band: Band;
  probes: ProbeResult[];
  log: string[];
}

type Tally = Map<number, { passed: number; failed: number }>;

export async function repeatBoundary(o: BoundaryInput): Promise<BoundaryResult> {
  const tally: Tally = new Map([[o.lo, { passed: 1, failed: 0 }]]);
  if (o.hi !== null) tally.set(o.hi, { passed: 0, failed: 1 });
  const probes: ProbeResult[] = [];
  const log: string[] = [];
  /** Runs multiple k up to n times; stops at its first failure when `untilFail`. */
  const runK = async (k: number, n: number, untilFail: boolean): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const r = await o.run(k * o.m, 'repeat', o.steps);
      probes.push(r);
      const t = tally.get(k) ?? { passed: 0, failed: 0 };
      if (r.ok) t.passed += 1;
      else t.failed += 1;
      tally.set(k, t);
      log.push(`repeat ${i + 1}/${n}: ${k * o.m} ${r.ok ? 'ok' : r.outcome}`);
      if (!r.ok && untilFail) return;
    }
  };
  let lo = o.lo;
  await runK(lo, o.repeats, true);
  // Step down (1, 2, 4 ... multiples) until a batch passes every one of its runs.
  for (let step = 1; lo > 0 && tally.get(lo)!.failed > 0; step *= 2) {
    lo = Math.max(0, lo - step);
    if (lo > 0) await runK(lo, o.repeats + (tally.has(lo) ? 0 : 1), true);
  }
  // A step of more than one multiple leaves batches between untried: bisect them, with repeats, so
  // that the max written is next to a batch that failed.
  for (
    let fail = firstFailAbove(tally, lo);
    lo > 0 && fail !== null && fail - lo > 1;
    fail = firstFailAbove(tally, lo)
  ) {
    const mid = Math.floor((lo + fail) / 2);
    await runK(mid, o.repeats + (tally.has(mid) ? 0 : 1), true);
    if (tally.get(mid)!.failed === 0) lo = mid;
  }
  if (o.hi !== null && o.hi > lo) await runK(o.hi, o.repeats, false);
  return { lo, ...bandOf(tally, lo, o), probes, log };
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
