// A trial's steps and memory from its events, for one process or for N ranks (workload.launcher):
// steps are rank 0's with the samples of every rank, memory is the largest rank's.
import { median, quantile } from 'simple-statistics';
import type { MemoryEvent, StepEvent, WorkloadEvent } from '../workloads/protocol/events.js';
import type { StepSample } from '../domain/index.js';
import { rankOf, StepSpan } from './counted-events.js';

export { rankOf };

export interface EventSummary {
  /** Timed steps: detail, then one sample with a `count` for the steps folded past MAX_STEP_DETAIL. */
  steps: StepSample[];
  warmup: StepSample[];
  /** Median and p95 of every timed step's seconds (folded ones included); null without timed steps. */
  latency: { median: number; p95: number } | null;
  /** Distinct epochs of the (rank 0) steps. */
  epochs: number;
  /** The steps brought more distinct epochs than are told apart: `epochs` is a lower bound. */
  epochsAtLeast?: true;
  /** Host RSS as reported (the largest rank's); null when none was. */
  reportedRss: number | null;
  /** Device memory as reported on CUDA (the largest rank's); null on CPU. */
  reportedDevice: number | null;
  /** Address space as reported (what prlimit --as caps; the largest rank's). */
  reportedLimited: number | null;
  /** The memory event as sent, without `event` (of the rank with the largest peak_bytes). */
  report?: Record<string, unknown>;
  /** Multi-rank trials: the rank whose peak_bytes was the largest, and each rank's (null: none reported). */
  peakRank?: number;
  rankPeaks?: (number | null)[];
}

/**
 * Steps and memory of a trial's events. One process (`ranks` 1): every step event, the last memory
 * event. N ranks: the steps (and warm-up steps, seconds, data waits, epochs) are rank 0's, and the
 * i-th step's samples are summed over every rank that reported an i-th step, so samples/s is the
 * trial's throughput; each memory figure is the largest over the ranks' last memory events.
 */
export function summarizeEvents(events: readonly WorkloadEvent[], ranks: number): EventSummary {
  const multi = ranks > 1;
  const stepsOf = new Map<number, StepSample[]>();
  const lead: { sample: StepSample; warmup: boolean; epoch: unknown; span?: StepSpan }[] = [];
  const memoryOf = new Map<number, MemoryEvent>();
  const lastStepMemory = new Map<number, MemoryEvent>();
  for (const e of events) {
    const rank = multi ? rankOf(e) : 0;
    if (e.event === 'step') {
      const span = e instanceof StepSpan ? e : undefined;
      const sample = span ? span.sample() : stepSample(e.samples, e.seconds, e.data_wait_seconds);
      if (rank === 0) lead.push({ sample, warmup: e.warmup === true, epoch: e.epoch, ...(span ? { span } : {}) });
      const mine = stepsOf.get(rank) ?? [];
      mine.push(sample);
      stepsOf.set(rank, mine);
      if (!(e instanceof StepSpan)) stepMemory(lastStepMemory, rank, e);
    } else if (e.event === 'memory') {
      memoryOf.set(rank, e);
    }
  }
  // A trial stopped before its memory event (at a plateau) has its peak from its steps' memory_bytes.
  for (const [rank, e] of lastStepMemory) if (!memoryOf.has(rank)) memoryOf.set(rank, e);
  const steps: StepSample[] = [];
  const warmup: StepSample[] = [];
  const epochs = new Set<number>();
  const seconds: number[] = [];
  lead.forEach(({ sample, warmup: isWarmup, epoch, span }, i) => {
    let samples = sample.samples;
    // Spans line up as steps do: each rank folds its steps past the same MAX_STEP_DETAIL.
    if (multi) for (const [rank, mine] of stepsOf) if (rank !== 0) samples += mine[i]?.samples ?? 0;
    (isWarmup ? warmup : steps).push({ ...sample, samples });
    if (typeof epoch === 'number' && Number.isSafeInteger(epoch) && epoch >= 0) epochs.add(epoch);
    if (span) for (const x of span.epochs) epochs.add(x);
    if (!isWarmup) {
      if (span) for (const x of span.stepSeconds()) seconds.push(x);
      else seconds.push(sample.seconds);
    }
  });
  const latency = seconds.length > 0 ? { median: median(seconds), p95: quantile(seconds, 0.95) } : null;
  const untold = lead.some(({ span }) => span?.epochsUntold === true);
  return {
    steps,
    warmup,
    latency,
    epochs: epochs.size,
    ...(untold ? { epochsAtLeast: true as const } : {}),
    ...memory(memoryOf, multi ? ranks : 1),
  };
}

type MemorySummary = Pick<
  EventSummary,
  'reportedRss' | 'reportedDevice' | 'reportedLimited' | 'report' | 'peakRank' | 'rankPeaks'
>;

function memory(byRank: ReadonlyMap<number, MemoryEvent>, ranks: number): MemorySummary {
  let rss: number | null = null;
  let device: number | null = null;
  let limited: number | null = null;
  let peak: { rank: number; event: MemoryEvent } | undefined;
  const larger = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));
  for (const [rank, e] of byRank) {
    // peak_bytes is the memory that bounds the batch: the GPU's on CUDA, else the host's.
    const onDevice = typeof e['device'] === 'string' && e['device'].startsWith('cuda');
    const hostRss = e['peak_rss_bytes'];
    rss = larger(rss, typeof hostRss === 'number' ? hostRss : onDevice ? null : e.peak_bytes);
    device = larger(device, onDevice ? e.peak_bytes : null);
    const vm = e['peak_address_space_bytes'];
    limited = larger(limited, typeof vm === 'number' ? vm : null);
    if (peak === undefined || e.peak_bytes > peak.event.peak_bytes) peak = { rank, event: e };
  }
  if (peak === undefined) return { reportedRss: null, reportedDevice: null, reportedLimited: null };
  const { event: _event, ...report } = peak.event;
  const summary: MemorySummary = { reportedRss: rss, reportedDevice: device, reportedLimited: limited, report };
  if (ranks <= 1) return summary;
  return {
    ...summary,
    peakRank: peak.rank,
    rankPeaks: Array.from({ length: ranks }, (_, r) => byRank.get(r)?.peak_bytes ?? null),
  };
}

/**
 * Keeps a rank's largest step memory_bytes as a memory event of its own (`from_steps`), with the
 * largest step address_space_bytes as its peak_address_space_bytes.
 */
function stepMemory(into: Map<number, MemoryEvent>, rank: number, e: StepEvent): void {
  const bytes = e.memory_bytes;
  const vm = e.address_space_bytes;
  const before = into.get(rank);
  // A step without memory_bytes starts nothing: its address space alone is no peak_bytes.
  if (before === undefined && typeof bytes !== 'number') return;
  const next: MemoryEvent =
    typeof bytes === 'number' && (before === undefined || bytes > before.peak_bytes)
      ? { event: 'memory', peak_bytes: bytes, device: e.device ?? 'cpu', from_steps: true }
      : before!;
  const vmBefore = before?.['peak_address_space_bytes'];
  const vmMax = Math.max(typeof vm === 'number' ? vm : 0, typeof vmBefore === 'number' ? vmBefore : 0);
  into.set(rank, vmMax > 0 ? { ...next, peak_address_space_bytes: vmMax } : next);
}

function stepSample(samples: number, seconds: number, dataWait: number | undefined): StepSample {
  return dataWait === undefined ? { samples, seconds } : { samples, seconds, data_wait_seconds: dataWait };
}
