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
  trials: { total: number; by_outcome: Record<Outcome, number> };
  wall_seconds: number;
  warnings: string[];
  /** Stages that could choose nothing because the workload failed: the run exits 2. */
  failed_stages: string[];
  files: Record<string, string>;
}
