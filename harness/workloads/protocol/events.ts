// The workload protocol's JSON-lines events: the public contract between tunebench and a workload.

/** Environment variables of the protocol. Keep these names stable: external programs rely on them. */
export const ENV = {
  config: 'TUNEBENCH_CONFIG',
  events: 'TUNEBENCH_EVENTS',
  warmupSteps: 'TUNEBENCH_WARMUP_STEPS',
  steps: 'TUNEBENCH_STEPS',
  trialId: 'TUNEBENCH_TRIAL_ID',
  /** Optional: the epochs the trial should span (a max-batch confirmation asks for an epoch boundary). */
  trialEpochs: 'TUNEBENCH_TRIAL_EPOCHS',
  /** Set when the trial runs as N ranks (workload.launcher): every rank reports, each event with its `rank`. */
  ranks: 'TUNEBENCH_RANKS',
} as const;

/** Name of the per-parameter variable, for example `batch_size` -> `TUNEBENCH_BATCH_SIZE`. */
export function paramEnvName(name: string): string {
  return `TUNEBENCH_${name.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}`;
}

export interface StepEvent {
  event: 'step';
  samples: number;
  seconds: number;
  data_wait_seconds?: number;
  warmup?: boolean;
  /** 0-based epoch of the step; the harness counts epoch boundaries from it. */
  epoch?: number;
  /**
   * Optional: the process's peak memory so far, read as the step ended (CUDA's max_memory_allocated
   * on a GPU, else the peak RSS); a confirmation runs until it stops growing.
   */
  memory_bytes?: number;
  /** Where memory_bytes was measured, as in the memory event: "cuda..." for device memory, else host. */
  device?: string;
  /**
   * Optional: the process's peak address space so far (VmPeak), what `prlimit --as` caps; a trial the
   * harness stops at its plateau sends no memory event, and this is its capped peak then.
   */
  address_space_bytes?: number;
  [extra: string]: unknown;
}
export interface MemoryEvent {
  event: 'memory';
  peak_bytes: number;
  [extra: string]: unknown;
}
export interface OomEvent {
  event: 'oom';
  message: string;
  [extra: string]: unknown;
}
export interface ErrorEvent {
  event: 'error';
  message: string;
  [extra: string]: unknown;
}
/** Where a phase event is in its phase: begun, ended (with its time and memory), or failed there. */
export const PHASE_MOMENTS = ['start', 'end', 'failed'] as const;
/** A phase name: lower-case letters, digits, `_` and `-`, as the adapter's timer.phase() takes them. */
export const PHASE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * A phase of training other than the steps (eval, checkpoint, ...), or where a failure happened
 * (`at: failed`, whose phase may also be `setup` or `train`). The adapter's timer.phase() sends them.
 */
export interface PhaseEvent {
  event: 'phase';
  at: (typeof PHASE_MOMENTS)[number];
  phase: string;
  /** 0-based epoch the phase ran at the end of (or failed in). */
  epoch?: number;
  /** Steps reported before it. */
  step?: number;
  /** `end`: how long the phase took. */
  seconds?: number;
  /** `end`: the phase's peak memory (`peak_scope: phase`) or the process's peak so far (`process`). */
  peak_bytes?: number;
  peak_scope?: 'phase' | 'process';
  [extra: string]: unknown;
}
export interface DoneEvent {
  event: 'done';
  [extra: string]: unknown;
}
export type WorkloadEvent = StepEvent | MemoryEvent | OomEvent | ErrorEvent | PhaseEvent | DoneEvent;

/**
 * Bounds of a believable measurement. A value outside them is no measurement but a bug or an attack
 * (`samples: 1e300, seconds: 1e-300` overflows throughput to Infinity), so its event is malformed.
 */
export const EVENT_LIMITS = {
  /** Samples in one step: counts past 2^53 are not exact in a double. */
  maxSamples: Number.MAX_SAFE_INTEGER,
  /** Seconds of one step: about 116 days, far longer than a trial runs. */
  maxSeconds: 1e7,
  /** Samples per second of one step (10^15): past any hardware, even counting bytes of HBM. */
  maxSamplesPerSecond: 1e15,
  /** Bytes of a memory figure: 2^53, about 9 PB. */
  maxBytes: Number.MAX_SAFE_INTEGER,
} as const;

/** Byte counts of a memory event that tunebench reads; each must be a believable number when present. */
const MEMORY_BYTE_FIELDS = ['peak_bytes', 'peak_rss_bytes', 'peak_address_space_bytes'] as const;

/** Parses one line; returns null for a malformed line and undefined for a well-formed unknown event. */
export function parseEventLine(line: string): WorkloadEvent | null | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const obj = value as Record<string, unknown>;
  switch (obj['event']) {
    case 'step':
      return parseStep(obj);
    case 'memory':
      return parseMemory(obj);
    case 'oom':
    case 'error':
      return { ...obj, message: String(obj['message'] ?? '') } as OomEvent | ErrorEvent;
    case 'phase':
      return parsePhase(obj);
    case 'done':
      return obj as DoneEvent;
    default:
      return typeof obj['event'] === 'string' ? undefined : null;
  }
}

function parseStep(obj: Record<string, unknown>): StepEvent | null {
  const { samples, seconds } = obj;
  if (!within(samples, 0, EVENT_LIMITS.maxSamples) || !within(seconds, 0, EVENT_LIMITS.maxSeconds)) return null;
  // A step with samples took time: zero seconds (or 1e-300) is an infinite rate, not a fast one.
  if (samples > 0 && !(samples / seconds <= EVENT_LIMITS.maxSamplesPerSecond)) return null;
  for (const field of ['memory_bytes', 'address_space_bytes'] as const) {
    const bytes = obj[field];
    if (bytes !== undefined && bytes !== null && !within(bytes, 0, EVENT_LIMITS.maxBytes)) return null;
  }
  if (obj['device'] !== undefined && typeof obj['device'] !== 'string') return null;
  const wait = obj['data_wait_seconds'];
  if (wait === undefined || wait === null) {
    const { data_wait_seconds: _absent, ...rest } = obj;
    return rest as StepEvent;
  }
  // The wait is part of the step; the tolerance absorbs rounding where both come from one clock.
  if (!within(wait, 0, seconds * (1 + 1e-9))) return null;
  return obj as StepEvent;
}

function parseMemory(obj: Record<string, unknown>): MemoryEvent | null {
  if (!within(obj['peak_bytes'], 0, EVENT_LIMITS.maxBytes)) return null;
  for (const field of MEMORY_BYTE_FIELDS) {
    const v = obj[field];
    if (typeof v === 'number' && !within(v, 0, EVENT_LIMITS.maxBytes)) return null;
  }
  // The rest is kept as the workload's report (allocator figures): a number there must be finite.
  if (Object.values(obj).some((v) => typeof v === 'number' && !Number.isFinite(v))) return null;
  return obj as MemoryEvent;
}

function parsePhase(obj: Record<string, unknown>): PhaseEvent | null {
  const { at, phase, epoch, step, seconds, peak_bytes: peak, peak_scope: scope } = obj;
  if (!PHASE_MOMENTS.includes(at as PhaseEvent['at'])) return null;
  if (typeof phase !== 'string' || !PHASE_NAME.test(phase)) return null;
  const count = (v: unknown) => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0);
  if (!count(epoch) || !count(step)) return null;
  if (seconds !== undefined && !within(seconds, 0, EVENT_LIMITS.maxSeconds)) return null;
  if (peak !== undefined && !within(peak, 0, EVENT_LIMITS.maxBytes)) return null;
  if (scope !== undefined && scope !== 'phase' && scope !== 'process') return null;
  return obj as PhaseEvent;
}

function within(v: unknown, low: number, high: number): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= low && v <= high;
}

/** Exit status a workload uses after it reported an `oom` event about itself. */
export const OOM_EXIT_CODE = 86;
/** Exit status a workload uses when its configuration was invalid (reported with an `error` event). */
export const INVALID_EXIT_CODE = 87;
