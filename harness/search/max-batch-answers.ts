// The answers of a max-batch search, computed after it from its runs: the recommended batch (peak memory
// within the headroom of the max's), the throughput points and, from every run, the fastest batch and the
// latency bound. They run the few trials they need (the recommended candidate, the throughput points) and
// never move the boundary the search found.
import { batchForMemory, fitLinear, type Reading } from './memory-fit.js';
import type { MaxBatchBoundary, MaxBatchOptions, MaxBatchResult } from './max-batch-types.js';
import type { ProbeFn, ProbeResult } from './probe.js';
import { summarizeThroughput } from './throughput.js';
import type { StageNote } from '../domain/index.js';

/** The answers over the boundary the search found; a search with no max has none. */
export async function answerMaxBatch(
  boundary: MaxBatchBoundary,
  run: ProbeFn,
  opts: MaxBatchOptions,
): Promise<MaxBatchResult> {
  const { max } = boundary;
  if (max === null) return { ...boundary, recommended: null, fastest: null, peakSamplesPerSecond: null };
  const a = new Answers(boundary, run, opts, max);
  const recommended = opts.skipRecommended ? null : await a.recommend();
  await a.throughputPoints();
  const summary = await summarizeThroughput(a.probes, run, { ...opts, max, m: opts.multipleOf });
  return {
    ...boundary,
    log: a.log,
    probes: a.probes,
    recommended,
    ...summary,
    notes: [...a.notes, ...summary.notes],
  };
}

/** The runs the answers add to the search's, with their log and notes. */
class Answers {
  readonly probes: ProbeResult[];
  readonly log: string[];
  readonly notes: StageNote[];
  private readonly m: number;

  constructor(
    boundary: MaxBatchBoundary,
    private readonly run: ProbeFn,
    private readonly opts: MaxBatchOptions,
    private readonly max: number,
  ) {
    this.probes = [...boundary.probes];
    this.log = [...boundary.log];
    this.notes = [...boundary.notes];
    this.m = opts.multipleOf;
  }

  /**
   * Largest batch whose peak resident memory (device memory on a GPU) stays within (1 - headroom)
   * of the max's. Resident memory is used, not the capped quantity, because an address-space cap is filled by allocator
   * reservations that say little about what a batch needs. The candidate is run before it is reported.
   */
  async recommend(): Promise<number | null> {
    const max = this.max;
    const atMax = this.probes.filter((p) => p.ok && p.batch === max && p.rssBytes !== null).map((p) => p.rssBytes!);
    const target = atMax.length > 0 ? (1 - this.opts.headroom) * Math.max(...atMax) : null;
    const resident = (): Reading[] =>
      this.probes.filter((p) => p.ok && p.rssBytes !== null).map((p) => ({ batch: p.batch, bytes: p.rssBytes! }));
    let candidate: number;
    if (target !== null && resident().length >= 2) {
      // Readings all above the target (a search that started next to the max): extend their line down.
      const fit = fitLinear(resident());
      const b =
        batchForMemory(resident(), target) ??
        (fit && fit.slope > 0 ? (target - fit.intercept) / fit.slope : max * (1 - this.opts.headroom));
      candidate = Math.floor(b / this.m) * this.m;
    } else {
      candidate = Math.floor((max * (1 - this.opts.headroom)) / this.m) * this.m;
      this.notes.push({ kind: 'recommended-by-fraction' });
    }
    candidate = Math.min(Math.max(candidate, this.m), max);
    for (let attempt = 0; attempt < 4; attempt++) {
      const known = this.probes.find((p) => p.batch === candidate && p.ok);
      const r = known ?? (await this.runExtra(candidate, 'recommended'));
      const within = target === null || r.rssBytes === null || r.rssBytes <= target;
      if (r.ok && within) return candidate;
      if (candidate === this.m) break;
      // Step down in proportion to the overshoot, at least one multiple.
      const ratio = r.rssBytes && target ? target / r.rssBytes : 0.9;
      candidate = Math.max(this.m, Math.min(candidate - this.m, Math.floor((candidate * ratio) / this.m) * this.m));
    }
    this.notes.push({ kind: 'headroom-not-kept' });
    return null;
  }

  /** Extra batch sizes, spaced geometrically below the max, so "fastest" rests on a curve. */
  async throughputPoints(): Promise<void> {
    const max = this.max;
    const n = this.opts.throughputPoints;
    if (n <= 0) return;
    const lowest = this.m;
    for (let i = 1; i <= n; i++) {
      const raw = lowest * (max / lowest) ** (i / (n + 1));
      const b = Math.max(this.m, Math.round(raw / this.m) * this.m);
      if (b >= max || this.probes.some((p) => p.batch === b && p.ok)) continue;
      await this.runExtra(b, 'throughput');
    }
  }

  private async runExtra(batch: number, role: 'recommended' | 'throughput'): Promise<ProbeResult> {
    // Probe length: a throughput point measures speed, not whether the batch holds (it is below the max,
    // whose run held); "fastest" compares it with the max's runs of at least that length.
    const r = await this.run(batch, role, undefined);
    this.probes.push(r);
    this.log.push(`${role}: ${batch} ${r.ok ? 'ok' : r.outcome}`);
    if (!r.ok) this.notes.push({ kind: 'failed-below-max', batch, outcome: r.outcome, max: this.max });
    return r;
  }
}
