// The phases of a trial other than its steps (eval, checkpoint) as its record keeps them, and the
// phase a failed trial was in: from the workload's failure report, else from the phases it left open.
import { MAX_PHASE_RUNS, type FailedIn, type Outcome, type PhaseRun } from '../domain/index.js';
import { PHASE_NAME, type OomEvent, type PhaseEvent, type WorkloadEvent } from '../workloads/protocol/events.js';
import { rankOf } from './counted-events.js';

const isPhase = (e: WorkloadEvent): e is PhaseEvent => e.event === 'phase';

/** The phase runs that ended, rank 0's, in order (at most MAX_PHASE_RUNS). */
export function phaseRuns(events: readonly WorkloadEvent[]): PhaseRun[] {
  const out: PhaseRun[] = [];
  for (const e of events) {
    if (!isPhase(e) || e.at !== 'end' || rankOf(e) !== 0) continue;
    if (out.length >= MAX_PHASE_RUNS) break;
    out.push({
      phase: e.phase,
      ...(e.epoch !== undefined ? { epoch: e.epoch } : {}),
      seconds: e.seconds ?? 0,
      ...(e.peak_bytes !== undefined ? { peak_bytes: e.peak_bytes } : {}),
      ...(e.peak_scope !== undefined ? { peak_scope: e.peak_scope } : {}),
    });
  }
  return out;
}

/**
 * Where a trial that did not end ok failed: the workload's `phase` event at `failed` (or the fields
 * of its `oom` event), else the innermost phase that started and never ended (a kill gives the
 * program no time to report; the adapter starts `train` at each epoch's first batch, which ends
 * every phase before it), else `train` when it reported phases but none was open. Undefined for
 * an ok trial and for a workload that reports no phases.
 */
export function failedIn(events: readonly WorkloadEvent[], outcome: Outcome): FailedIn | undefined {
  if (outcome === 'ok') return undefined;
  const reported = events.find((e): e is PhaseEvent => isPhase(e) && e.at === 'failed');
  if (reported) return located(reported, 'event');
  const oom = events.find((e): e is OomEvent => e.event === 'oom');
  if (oom && typeof oom['phase'] === 'string') return fromOom(oom);
  const open: PhaseEvent[] = [];
  let sawPhase = false;
  let lastEpoch: number | undefined;
  for (const e of events) {
    if (e.event === 'step' && typeof e.epoch === 'number') lastEpoch = e.epoch;
    if (!isPhase(e) || rankOf(e) !== 0) continue;
    sawPhase = true;
    // A `train` start begins an epoch's steps: whatever ran before it has ended.
    if (e.at === 'start' && e.phase === 'train') open.splice(0, open.length, e);
    else if (e.at === 'start') open.push(e);
    else if (e.at === 'end') open.pop();
  }
  const inner = open.at(-1);
  if (inner) return located(inner, 'open-phase');
  if (!sawPhase) return undefined;
  return { phase: 'train', ...(lastEpoch !== undefined ? { epoch: lastEpoch } : {}), source: 'outside-phases' };
}

function located(e: PhaseEvent, source: FailedIn['source']): FailedIn {
  return {
    phase: e.phase,
    ...(e.epoch !== undefined ? { epoch: e.epoch } : {}),
    ...(e.step !== undefined ? { step: e.step } : {}),
    source,
  };
}

/** An `oom` event's own phase fields, when they pass the checks a `phase` event passes. */
function fromOom(oom: OomEvent): FailedIn | undefined {
  const { phase, epoch, step } = oom;
  const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
  if (typeof phase !== 'string' || !PHASE_NAME.test(phase)) return undefined;
  return { phase, ...(count(epoch) ? { epoch } : {}), ...(count(step) ? { step } : {}), source: 'event' };
}
