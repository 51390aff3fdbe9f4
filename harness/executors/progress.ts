// What executors and stages report while trials run; cli/progress.ts draws it on a terminal.
import type { Config, TrialRecord } from '../domain/index.js';
import type { WorkloadEvent } from '../workloads/protocol/events.js';

export interface TrialStartInfo {
  stage: string;
  /** 1-based number of the trial within the stage, and the current estimate of the stage's total. */
  n: number;
  ofAbout: number;
  config: Config;
  role: string;
  /** The parameters this stage varies; the rest are shown once in the stage header. */
  show: string[];
  /**
   * The stage's own estimate of the seconds its remaining trials take, this one included, from what its
   * trials have cost so far (a max-batch search: short probes, and runs until memory flattens from their
   * step time); absent: the progress line estimates from the mean trial.
   */
  etaSeconds?: number;
}

export interface Progress {
  /** The run's stages in order with about how many trials each runs: for an ETA of the whole run. */
  plan?(stages: readonly { name: string; trials: number }[]): void;
  stage(name: string, description: string): void;
  trialStart(info: TrialStartInfo): void;
  trialEvent(event: WorkloadEvent): void;
  trialEnd(record: TrialRecord): void;
  note(message: string): void;
  finish(): void;
}

/** Progress that shows nothing: --quiet, and work that reports to no one (a rebuilt report's replay). */
export const SILENT_PROGRESS: Progress = {
  stage: () => undefined,
  trialStart: () => undefined,
  trialEvent: () => undefined,
  trialEnd: () => undefined,
  note: () => undefined,
  finish: () => undefined,
};
