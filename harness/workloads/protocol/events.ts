// The workload protocol's JSON-lines events: the public contract between tunebench and a workload.
// Every line from a workload is hostile until its event kind's zod schema accepts it.
import { z } from 'zod';

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
/** A moment of the trial for its timeline, as the adapter saw it: `imported` (a fresh process's imports), `start`. */
export interface MarkEvent {
  event: 'mark';
  name: (typeof MARK_NAMES)[number];
  /** Unix time in seconds, from the workload's clock (the same machine's as the harness's). */
  t: number;
  [extra: string]: unknown;
}
export const MARK_NAMES = ['imported', 'start'] as const;
/** The end of one in-process attempt of a bracket session (max-batch `bracket: in-process`), in its own events file. */
export interface AttemptEvent {
  event: 'attempt';
  ok: boolean;
  oom: boolean;
  seconds: number;
  /** CUDA's max_memory_allocated over the attempt (its counters were reset before it). */
  peak_device_bytes?: number;
  /** Of a failed attempt: the exception's type and message. */
  error?: string;
  message?: string;
  [extra: string]: unknown;
}
export type WorkloadEvent =
  StepEvent | MemoryEvent | OomEvent | ErrorEvent | PhaseEvent | DoneEvent | MarkEvent | AttemptEvent;

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

/** A count in [0, max]: finite (zod's numbers are), never NaN. */
const upTo = (max: number) => z.number().min(0).max(max);
const bytes = upTo(EVENT_LIMITS.maxBytes);
/** A protocol count (epoch, step): a non-negative safe integer. */
const index = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const stepSchema = z
  .looseObject({
    event: z.literal('step'),
    samples: upTo(EVENT_LIMITS.maxSamples),
    seconds: upTo(EVENT_LIMITS.maxSeconds),
    memory_bytes: bytes.nullish(),
    address_space_bytes: bytes.nullish(),
    device: z.string().optional(),
    data_wait_seconds: z.number().min(0).nullish(),
  })
  // A step with samples took time: zero seconds (or 1e-300) is an infinite rate, not a fast one.
  .refine((e) => !(e.samples > 0) || e.samples / e.seconds <= EVENT_LIMITS.maxSamplesPerSecond)
  // The wait is part of the step; the tolerance absorbs rounding where both come from one clock.
  .refine((e) => e.data_wait_seconds == null || e.data_wait_seconds <= e.seconds * (1 + 1e-9))
  // null is "not measured": the field is left out, as the type has it.
  .transform((e): StepEvent => {
    const { data_wait_seconds: wait, memory_bytes: memory, address_space_bytes: vm, ...rest } = e;
    return {
      ...rest,
      ...(memory == null ? {} : { memory_bytes: memory }),
      ...(vm == null ? {} : { address_space_bytes: vm }),
      ...(wait == null ? {} : { data_wait_seconds: wait }),
    };
  });

const memorySchema = z
  .looseObject({
    event: z.literal('memory'),
    peak_bytes: bytes,
    peak_rss_bytes: bytes.optional(),
    peak_address_space_bytes: bytes.optional(),
  })
  // The rest is kept as the workload's report (allocator figures): a number there must be finite.
  .refine((e) => Object.values(e).every((v) => typeof v !== 'number' || Number.isFinite(v)));

const messageSchema = z.looseObject({
  event: z.enum(['oom', 'error']),
  message: z.unknown().transform((m) => String(m ?? '')),
});

const phaseSchema = z.looseObject({
  event: z.literal('phase'),
  at: z.enum(PHASE_MOMENTS),
  phase: z.string().regex(PHASE_NAME),
  epoch: index.optional(),
  step: index.optional(),
  seconds: upTo(EVENT_LIMITS.maxSeconds).optional(),
  peak_bytes: bytes.optional(),
  peak_scope: z.enum(['phase', 'process']).optional(),
});

const doneSchema = z.looseObject({ event: z.literal('done') });

/** A unix time in seconds that a trial on this machine can have (2001 to 2286). */
const unixSeconds = z.number().min(1e9).max(1e10);

const markSchema = z.looseObject({ event: z.literal('mark'), name: z.enum(MARK_NAMES), t: unixSeconds });

const attemptSchema = z
  .looseObject({
    event: z.literal('attempt'),
    ok: z.boolean(),
    oom: z.boolean(),
    seconds: upTo(EVENT_LIMITS.maxSeconds),
    peak_device_bytes: bytes.optional(),
    error: z.string().max(200).optional(),
    message: z.string().max(2000).optional(),
  })
  .transform((e): AttemptEvent => e);

/** The schema of each known event kind; another `event` string is a well-formed event tunebench ignores. */
const EVENT_SCHEMAS: Record<string, z.ZodType<WorkloadEvent>> = {
  step: stepSchema,
  memory: memorySchema,
  oom: messageSchema,
  error: messageSchema,
  phase: phaseSchema,
  done: doneSchema,
  mark: markSchema,
  attempt: attemptSchema,
};

/** Parses one line; returns null for a malformed line and undefined for a well-formed unknown event. */
export function parseEventLine(line: string): WorkloadEvent | null | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const kind = (value as { event?: unknown }).event;
  if (typeof kind !== 'string') return null;
  const schema = Object.hasOwn(EVENT_SCHEMAS, kind) ? EVENT_SCHEMAS[kind] : undefined;
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Exit status a workload uses after it reported an `oom` event about itself. */
export const OOM_EXIT_CODE = 86;
/** Exit status a workload uses when its configuration was invalid (reported with an `error` event). */
export const INVALID_EXIT_CODE = 87;
