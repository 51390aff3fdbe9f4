// A trial's memory per step while it runs: the workload's memory_bytes where its step events carry
// them, else the harness's own reading (cgroup peak, or sampled tree RSS) given to the last step of
// each read of the events file. Under a plateau rule it is the stop hook that ends the trial once the
// series has flattened, and it gives the record its series and verdict.
import { plateauStep, judgeGrowth, type MemoryPoint } from '../stats/plateau.js';
import type { WorkloadEvent } from '../workloads/protocol/events.js';
import { rankOf, StepSpan } from './counted-events.js';
import type { StopUpdate } from './process.js';
import {
  MAX_STEP_DETAIL,
  type MemoryGrowth,
  type MemorySeries,
  type MemorySource,
  type PlateauRule,
} from '../domain/index.js';

export class MemorySeriesTracker {
  private readonly workload: MemoryPoint[] = [];
  private readonly harness: MemoryPoint[] = [];
  private harnessSource: MemorySource | null = null;
  private steps = 0;

  constructor(
    private readonly rule: PlateauRule | undefined,
    private readonly ranks: number,
  ) {}

  /** The stop hook: reads the steps; true once the series has flattened under the rule. */
  readonly update = ({ events, memory }: StopUpdate): boolean => {
    let unread: MemoryPoint | undefined;
    for (const e of events) {
      const point = this.take(e);
      if (point && typeof e['memory_bytes'] !== 'number') unread = point;
    }
    const reading = memory.cgroupPeakBytes ?? (memory.treeRssPeakBytes > 0 ? memory.treeRssPeakBytes : null);
    if (unread && reading !== null && this.workload.length === 0) {
      this.harnessSource = memory.cgroupPeakBytes !== null ? 'cgroup' : 'tree-rss';
      this.harness.push({ ...unread, bytes: reading });
    }
    return this.rule !== undefined && plateauStep(this.points, this.rule) !== undefined;
  };

  /** Counts a rank-0 step; returns its point (with the workload's reading when it sent one). */
  private take(e: WorkloadEvent): MemoryPoint | undefined {
    if (e.event !== 'step' || (this.ranks > 1 && rankOf(e) !== 0)) return undefined;
    if (e instanceof StepSpan) {
      this.steps += e.count;
      return undefined;
    }
    const step = this.steps++;
    const epoch = typeof e.epoch === 'number' && Number.isSafeInteger(e.epoch) && e.epoch >= 0 ? e.epoch : undefined;
    const bytes = typeof e.memory_bytes === 'number' ? e.memory_bytes : 0;
    const point = { step, bytes, ...(epoch !== undefined ? { epoch } : {}) };
    if (typeof e.memory_bytes === 'number' && this.workload.length < MAX_STEP_DETAIL) this.workload.push(point);
    return point;
  }

  private get points(): readonly MemoryPoint[] {
    return this.workload.length > 0 ? this.workload : this.harness;
  }

  private get source(): MemorySource | null {
    return this.workload.length > 0 ? 'workload' : this.harness.length > 0 ? this.harnessSource : null;
  }

  /** Takes the events read after the last update (the final read, once the process is gone). */
  finish(all: readonly WorkloadEvent[]): void {
    let seen = 0;
    for (const e of all) {
      if (e.event !== 'step' || (this.ranks > 1 && rankOf(e) !== 0)) continue;
      seen += e instanceof StepSpan ? e.count : 1;
      if (seen > this.steps) this.take(e);
    }
  }

  /** The series for the record; undefined without readings. */
  series(): MemorySeries | undefined {
    const source = this.source;
    if (source === null) return undefined;
    const points = this.points;
    const epochs = points.every((p) => p.epoch !== undefined) ? { epochs: points.map((p) => p.epoch!) } : {};
    return { source, steps: points.map((p) => p.step), bytes: points.map((p) => p.bytes), ...epochs };
  }

  /** The verdict under the rule, for a trial that was given `bound` steps; undefined without a rule. */
  verdict(bound: number): MemoryGrowth | undefined {
    if (!this.rule) return undefined;
    return judgeGrowth(this.points, this.rule, { steps: this.steps, bound, source: this.source });
  }
}
