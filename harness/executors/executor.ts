// Where trials run. The local executor runs each trial here, one at a time (timing on one device must
// not be shared). The SLURM executor runs them as job arrays: a stage announces the trials it will run
// next (plan), and the executor submits them together, then hands back each record in order (run).
import { runTrial, type TrialContext } from '../trial/run-trial.js';
import type { WorkloadEvent } from '../workloads/protocol/events.js';
import type { MeasureSteps } from '../workloads/workload.js';
import { roleKey, type Config, type Fingerprint, type Role, type TrialRecord } from '../domain/index.js';

/** One trial as a stage asks for it; the executor does not need to know why. */
export interface TrialSpec {
  stage: string;
  role: Role;
  config: Config;
  measure: MeasureSteps;
  argv?: readonly string[];
  /** Device memory decides the trial: a fork of the warm server counts as fresh (TrialRequest.deviceBound). */
  deviceBound?: boolean;
  /** The trial's own timeout (TrialRequest.timeoutSeconds); absent: limits.timeout. */
  timeoutSeconds?: number;
}

export interface Executor {
  readonly kind: 'local' | 'slurm';
  /**
   * The trials a stage will run next, in order, as journal indices first..first+n-1. An executor that
   * runs trials in parallel starts them now; the local executor ignores it.
   */
  plan(first: number, trials: readonly TrialSpec[]): Promise<void>;
  /** Runs (or collects) the trial that becomes journal entry `index`. */
  run(index: number, spec: TrialSpec, onEvent?: (e: WorkloadEvent) => void): Promise<TrialRecord>;
  /** What happened that the report should say (retried or given-up tasks). */
  report?(): string[];
  /**
   * Runs stage `k` (max-batch) whole inside one allocation, on nodes with `constraint` when given;
   * returns the trials it journaled there and the machine it ran on.
   */
  allocateStage?(k: number, name: string, constraint?: string): Promise<StageAllocation>;
}

/** What a stage's allocation ran: its trials, and the node (host and fingerprint) they ran on. */
export interface StageAllocation {
  records: TrialRecord[];
  host: string;
  environment: Fingerprint;
}

export function localExecutor(trial: TrialContext): Executor {
  return {
    kind: 'local',
    plan: async () => undefined,
    run: (index, spec, onEvent) =>
      runTrial(
        { ...trial, ...(onEvent ? { onEvent } : {}) },
        {
          index,
          stage: spec.stage,
          role: spec.role,
          config: spec.config,
          measure: spec.measure,
          ...(spec.argv ? { argv: spec.argv } : {}),
          ...(spec.deviceBound ? { deviceBound: true } : {}),
          ...(spec.timeoutSeconds !== undefined ? { timeoutSeconds: spec.timeoutSeconds } : {}),
        },
      ),
  };
}

/** Canonical text of a spec: a planned trial and the trial later asked for must match exactly. */
export function specKey(spec: TrialSpec): string {
  return JSON.stringify([
    spec.stage,
    roleKey(spec.role),
    canonicalConfig(spec.config),
    spec.measure,
    spec.argv ?? null,
  ]);
}

/** A config's entries in name order, undefined ones left out: equal configs give equal JSON. */
export function canonicalConfig(config: Config): [string, Config[string]][] {
  return Object.entries(config)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
}
