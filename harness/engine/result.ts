// The canonical result of a run: what --json prints and what the reports read besides the journal.
import type { Config, Outcome } from '../trial/record.js';
import type { Evidence, StageOutcome } from './context.js';

export interface RunResult {
  experiment: string;
  run_id: string;
  run_dir: string;
  /** One line: host, CPU, cap mechanism. */
  environment: string;
  chosen: Config;
  evidence: Record<string, Evidence>;
  stages: StageOutcome[];
  /** `replayed`: trials taken from the journal on resume instead of being run again. */
  trials: { total: number; by_outcome: Record<Outcome, number>; replayed?: number };
  wall_seconds: number;
  warnings: string[];
  /** Stages that could choose nothing because the workload failed: the run exits 2. */
  failed_stages: string[];
  files: Record<string, string>;
  /** Set when the run was stopped (a signal) or failed before its end: the report is partial. */
  stopped?: StopInfo;
}

export interface StopInfo {
  /** Why: "stopped by SIGTERM", or the error that ended the run. */
  reason: string;
  /** The stage that was running, its trials so far, and all completed trials. */
  stage: string;
  stage_trials: number;
  completed_trials: number;
  /** The command that continues the run. */
  resume: string;
}
