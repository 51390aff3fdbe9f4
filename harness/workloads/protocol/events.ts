// The workload protocol's JSON-lines events: the public contract between tunebench and a workload.

/** Environment variables of the protocol. Keep these names stable: external programs rely on them. */
export const ENV = {
  config: 'TUNEBENCH_CONFIG',
  events: 'TUNEBENCH_EVENTS',
  warmupSteps: 'TUNEBENCH_WARMUP_STEPS',
  steps: 'TUNEBENCH_STEPS',
  trialId: 'TUNEBENCH_TRIAL_ID',
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
export interface DoneEvent {
  event: 'done';
  [extra: string]: unknown;
}
export type WorkloadEvent = StepEvent | MemoryEvent | OomEvent | ErrorEvent | DoneEvent;

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
      return isNonNegative(obj['samples']) && isNonNegative(obj['seconds']) ? (obj as StepEvent) : null;
    case 'memory':
      return isNonNegative(obj['peak_bytes']) ? (obj as MemoryEvent) : null;
    case 'oom':
    case 'error':
      return { ...obj, message: String(obj['message'] ?? '') } as OomEvent | ErrorEvent;
    case 'done':
      return obj as DoneEvent;
    default:
      return typeof obj['event'] === 'string' ? undefined : null;
  }
}

function isNonNegative(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/** Exit status a workload uses after it reported an `oom` event about itself. */
export const OOM_EXIT_CODE = 86;
/** Exit status a workload uses when its configuration was invalid (reported with an `error` event). */
export const INVALID_EXIT_CODE = 87;
