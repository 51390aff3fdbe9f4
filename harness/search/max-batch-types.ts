// The max-batch search's options and results, apart from the search so that its phases (the search,
// the answers after it) share them without importing each other.
import type { Band } from './boundary-repeat.js';
import type { RunLengths } from './eta.js';
import type { Prediction, Reading } from './memory-fit.js';
import type { ProbeResult } from './probe.js';
import type {
  LatencyBound,
  LatencyLimit,
  LinearFit,
  MaxBatchStatus,
  MemoryGrowth,
  StageNote,
} from '../domain/index.js';

/** The strategies a max-batch search may place its boundary with. */
export type MaxBatchStrategy = 'tunebench' | 'power-bisect' | 'shrink-on-oom';

export interface MaxBatchOptions {
  multipleOf: number;
  start: number;
  ceiling: number;
  /** The memory cap the readings are compared with; null disables prediction (doubling, then bisection). */
  capBytes: number | null;
  headroom: number;
  tolerance: number;
  throughputPoints: number;
  /** Least steps of the confirmation run at the max, which runs until memory flattens; 0 skips it. */
  confirmSteps: number;
  latency?: LatencyLimit;
  /** Place probes by what they cost (default), or by count alone: then the sequence never depends on timing. */
  placeBy?: 'time' | 'count';
  /**
   * How the probes place the boundary before the confirmation: tunebench's own (explore, then guided pairs,
   * doubling or splitting), or a reference finder (search/reference.ts) whose probes are this search's, so its
   * answer is confirmed, repeated and reported as tunebench's own is.
   */
  strategy?: MaxBatchStrategy;
  /** Safety stop for a misbehaving workload. */
  maxProbes?: number;
  /**
   * A batch that a neighbouring search showed must fit here (a longer bucket's max fits a shorter
   * bucket): the search starts with it as its lower bound, without exploring, and runs it before
   * reporting it.
   */
  knownOk?: number;
  /**
   * What an in-process bracket showed (batch sizes): `lo` passed there (a lower bound, not yet run in a
   * fresh process), `hi` failed there (only a hint). The fresh search starts by confirming lo, which
   * is the run until memory flattens at the max when the hint is right, then runs hi.
   */
  hint?: { lo: number | null; hi: number | null; readings: readonly Reading[] };
  /** Skip the recommended batch (its trials) when nothing uses it: a bucket map of maxima. */
  skipRecommended?: boolean;
  /**
   * A prediction of the limit from more than this search's readings (one model across buckets, or
   * another card's memory line); used even without capBytes.
   */
  predict?: (readings: readonly Reading[]) => Prediction | undefined;
  /** Runs of the max and of the smallest failing batch after the search (harness/search/boundary-repeat.ts); 0: none. */
  repeatBoundary?: number;
  /** The chance of failing a run that the max written may have, by the band model (default 0.02). */
  maxRisk?: number;
  /** Told, before each search probe, about how many trials the stage still needs, and how long they take (for progress). */
  onEstimate?: (remaining: number, seconds?: number) => void;
  /** The steps of a short probe and at least of a run until memory flattens, warm-up included: the ETA in seconds. */
  runLengths?: RunLengths;
}

/** What the search found, before the answers: the boundary, its confirmation and every run it made. */
export type MaxBatchBoundary = Omit<
  MaxBatchResult,
  'recommended' | 'fastest' | 'peakSamplesPerSecond' | 'latencyBound'
>;

export interface MaxBatchResult {
  status: MaxBatchStatus;
  /** Largest batch that ran (exact when status is "exact"; the ceiling when "ceiling"). */
  max: number | null;
  largestOk: number | null;
  smallestFail: number | null;
  /** Trials until both bounds were known: search probes and failed confirmations. */
  probesToMax: number;
  /** The max ran until its memory flattened (a plateau): a max that holds. */
  confirmed: boolean;
  /** What the longest run at the max showed of its memory; null when no run measured it (no confirmation). */
  memoryGrowth: MemoryGrowth | null;
  recommended: number | null;
  fastest: number | null;
  peakSamplesPerSecond: number | null;
  latencyBound?: LatencyBound;
  fit?: LinearFit;
  log: string[];
  notes: StageNote[];
  probes: ProbeResult[];
  /** repeatBoundary: what the max and the batch above it did when run again. */
  band?: Band;
}
