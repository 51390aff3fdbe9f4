// The events of a trial that count, held in bounded memory. Nothing a rank sends after its `done`
// counts (steps, memory, oom: it is ignored and counted); step events past MAX_STEP_DETAIL of a rank
// and kind (timed, warm-up) are folded into one StepSpan; only the last memory event of a rank is kept.
import { MAX_PHASE_RUNS, MAX_STEP_DETAIL, type StepSample } from '../domain/index.js';
import type { StepEvent, WorkloadEvent } from '../workloads/protocol/events.js';

/** oom, error and done events kept (classification reads the first ones); later ones still count. */
export const MAX_KEPT_NOTICES = 64;
/** phase events kept (start, end and failed of eval, checkpoint...): a record keeps MAX_PHASE_RUNS runs. */
export const MAX_KEPT_PHASE_EVENTS = 3 * MAX_PHASE_RUNS;

/** The rank an event came from: its `rank` field, else 0 (without TUNEBENCH_RANKS only rank 0 reports). */
export function rankOf(e: WorkloadEvent): number {
  const rank = e['rank'];
  return typeof rank === 'number' && Number.isSafeInteger(rank) && rank >= 0 ? rank : 0;
}

/**
 * The steps of one rank and kind past the first MAX_STEP_DETAIL, folded: summed samples, seconds and
 * data waits, their count, and every step's seconds (for exact latency percentiles; bounded by the
 * reader's byte cap on the events file). Made only by the harness: a workload cannot send one.
 */
export class StepSpan implements StepEvent {
  readonly event = 'step' as const;
  samples = 0;
  seconds = 0;
  count = 0;
  /** Distinct epochs of the folded steps (at most MAX_STEP_DETAIL are told apart). */
  readonly epochs = new Set<number>();
  /** Set when a folded step brought an epoch past the ones told apart: the count is a lower bound. */
  epochsUntold = false;
  private wait: number | undefined = 0;
  private secs = new Float64Array(1024);
  [extra: string]: unknown;

  constructor(
    readonly warmup: boolean,
    readonly rank: number,
  ) {}

  add(e: StepEvent): void {
    this.samples += e.samples;
    this.seconds += e.seconds;
    // A data wait counts only when every folded step reported one (as stallFraction reads steps).
    this.wait =
      this.wait === undefined || e.data_wait_seconds === undefined ? undefined : this.wait + e.data_wait_seconds;
    if (this.count === this.secs.length) {
      const grown = new Float64Array(this.secs.length * 2);
      grown.set(this.secs);
      this.secs = grown;
    }
    this.secs[this.count] = e.seconds;
    this.count += 1;
    const epoch = e.epoch;
    if (typeof epoch === 'number' && Number.isSafeInteger(epoch) && epoch >= 0 && !this.epochs.has(epoch)) {
      if (this.epochs.size < MAX_STEP_DETAIL) this.epochs.add(epoch);
      else this.epochsUntold = true;
    }
  }

  get data_wait_seconds(): number | undefined {
    return this.wait;
  }

  /** The seconds of every folded step. */
  stepSeconds(): Float64Array {
    return this.secs.subarray(0, this.count);
  }

  /** The folded steps as one sample of the record (`count` only when it stands for more than one). */
  sample(samples = this.samples): StepSample {
    return {
      samples,
      seconds: this.seconds,
      ...(this.wait !== undefined ? { data_wait_seconds: this.wait } : {}),
      ...(this.count > 1 ? { count: this.count } : {}),
    };
  }
}

/** Step events among `events`, a StepSpan counting as the steps it folds. */
export function stepEventCount(events: readonly WorkloadEvent[]): number {
  let n = 0;
  for (const e of events) if (e.event === 'step') n += e instanceof StepSpan ? e.count : 1;
  return n;
}

interface RankState {
  timed: number;
  warmup: number;
  timedSpan?: StepSpan;
  warmupSpan?: StepSpan;
  /** Where the rank's last memory event sits in `events`. */
  memoryAt?: number;
}

export class CountedEvents {
  /** The counted events, bounded (see the file header). */
  readonly events: WorkloadEvent[] = [];
  /** Events a rank sent after its own `done`: not counted. */
  afterDone = 0;
  /** Of a multi-rank trial, events that named a rank outside 0..ranks-1: not counted. */
  foreignRank = 0;
  private readonly done = new Set<number>();
  private readonly state = new Map<number, RankState>();
  private notices = 0;
  private phaseEvents = 0;

  constructor(private readonly ranks: number) {}

  /** Takes one well-formed event; returns whether it counts. */
  take(e: WorkloadEvent): boolean {
    const rank = this.ranks > 1 ? rankOf(e) : 0;
    if (rank >= this.ranks) {
      this.foreignRank += 1;
      return false;
    }
    if (this.done.has(rank)) {
      this.afterDone += 1;
      return false;
    }
    let s = this.state.get(rank);
    if (s === undefined) {
      s = { timed: 0, warmup: 0 };
      this.state.set(rank, s);
    }
    if (e.event === 'step') this.step(e, rank, s);
    else if (e.event === 'memory') {
      if (s.memoryAt === undefined) s.memoryAt = this.events.push(e) - 1;
      else this.events[s.memoryAt] = e;
    } else if (e.event === 'phase') {
      // Kept apart from the notices: a workload's many phases never crowd out its oom or done.
      if (this.phaseEvents < MAX_KEPT_PHASE_EVENTS) this.events.push(e);
      this.phaseEvents += 1;
    } else {
      if (e.event === 'done') this.done.add(rank);
      if (this.notices < MAX_KEPT_NOTICES) this.events.push(e);
      this.notices += 1;
    }
    return true;
  }

  /** What was not counted, as clauses for the trial's reason; empty when everything counted. */
  ignored(): string[] {
    const out: string[] = [];
    if (this.afterDone > 0)
      out.push(
        `${this.afterDone} event(s) after done ignored` +
          `${this.ranks > 1 ? " (each rank's, after its own done)" : ''}: nothing after done counts`,
      );
    if (this.foreignRank > 0)
      out.push(`${this.foreignRank} event(s) ignored that named a rank outside 0..${this.ranks - 1}`);
    return out;
  }

  private step(e: StepEvent, rank: number, s: RankState): void {
    const warmup = e.warmup === true;
    const seen = warmup ? s.warmup++ : s.timed++;
    if (seen < MAX_STEP_DETAIL) {
      this.events.push(e);
      return;
    }
    let span = warmup ? s.warmupSpan : s.timedSpan;
    if (span === undefined) {
      span = new StepSpan(warmup, rank);
      if (warmup) s.warmupSpan = span;
      else s.timedSpan = span;
      this.events.push(span);
    }
    span.add(e);
  }
}
