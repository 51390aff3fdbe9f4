// What a batch-size search sees of one trial, and the function it calls to run one.
import type { MemoryGrowth, PROBE_ROLES, RoleKind, TrialException } from '../domain/index.js';

/** The role kinds of a batch-size search's runs (each is a trial role's kind: domain/roles.ts; notes name them too). */
export type ProbeRole = Extract<RoleKind, (typeof PROBE_ROLES)[number]>;

export interface ProbeResult {
  batch: number;
  /** Ran every step without running out of memory (or failing otherwise). */
  ok: boolean;
  /** The trial's outcome, kept so that a non-OOM failure can be told apart. */
  outcome: 'ok' | 'oom' | 'timeout' | 'crash' | 'invalid';
  reason?: string;
  /** Peak of the capped quantity, when known: it steers the search. */
  limitedBytes: number | null;
  /** Peak resident memory, when known: the recommended batch keeps headroom in it. */
  rssBytes: number | null;
  samplesPerSecond: number | null;
  p50Seconds: number | null;
  p95Seconds: number | null;
  role: ProbeRole;
  /** Wall time of the trial, when known: the search learns what probes cost from it. */
  seconds?: number | null;
  /** Of a run until memory flattens (a confirmation): whether it did. */
  growth?: MemoryGrowth;
  /** Of a failed run: the exception it died of, when its stderr held one. */
  error?: TrialException;
}

/**
 * Runs one fresh-process trial at a batch size. `steps` overrides the stage's steps; a run of at least
 * the confirmation's steps (other than a throughput point) runs until memory flattens, `steps` being its minimum.
 */
export type ProbeFn = (batch: number, role: ProbeRole, steps?: number) => Promise<ProbeResult>;
