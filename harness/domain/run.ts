// A run: run.json as tunebench writes it while a run is under way and when it ends, and the result
// that `--json` prints and the reports read besides the journal. One shape, checked when read back.
import { z } from 'zod';
import { configSchema } from './params.js';
import { evidenceSchema, stageFailureSchema, stageOutcomeSchema } from './stages.js';
import { fingerprintSchema } from './telemetry.js';
import { OUTCOMES } from './trial.js';

/** run.json format version. */
export const RUN_VERSION = 1;

export const RUN_STATUSES = ['running', 'waiting', 'stopped', 'failed', 'finished'] as const;

export const stopInfoSchema = z.object({
  /** Why: "stopped by SIGTERM", or the error that ended the run. */
  reason: z.string(),
  /** The stage that was running, its trials so far, and all completed trials. */
  stage: z.string(),
  stage_trials: z.number(),
  completed_trials: z.number(),
  /** The command that continues the run. */
  resume: z.string(),
});
export type StopInfo = z.infer<typeof stopInfoSchema>;

export const runResultSchema = z.object({
  experiment: z.string(),
  run_id: z.string(),
  run_dir: z.string(),
  /** One line: host, CPU, cap mechanism. */
  environment: z.string(),
  chosen: configSchema,
  evidence: z.record(z.string(), evidenceSchema),
  stages: z.array(stageOutcomeSchema),
  /** `replayed`: trials taken from the journal on resume instead of being run again. */
  trials: z.object({
    total: z.number(),
    by_outcome: z.record(z.enum(OUTCOMES), z.number()),
    replayed: z.number().optional(),
  }),
  wall_seconds: z.number(),
  warnings: z.array(z.string()),
  /** Stages that could choose nothing because the workload failed: the run exits 2. */
  failed_stages: z.array(z.string()),
  /**
   * Stages that failed at a value an earlier stage chose (every config OOMed at the chosen batch) and that
   * no lower batch rescued: the harness's answer did not hold, so the run exits 1 (absent in older runs).
   */
  stage_failures: z.array(stageFailureSchema).optional(),
  files: z.record(z.string(), z.string()),
  /** Set when the run was stopped (a signal) or failed before its end: the report is partial. */
  stopped: stopInfoSchema.optional(),
});
export type RunResult = z.infer<typeof runResultSchema>;

/** What a `tunebench bisect` run bisects, so that --resume can go on (absent in other runs). */
export const bisectRunSchema = z.object({
  repo: z.string(),
  good: z.string(),
  bad: z.string(),
  build: z.string().nullable(),
  build_timeout_seconds: z.number(),
  /** The experiment file's path inside the repository (its workload runs from there); null: outside, or a one-liner. */
  experiment_in_repo: z.string().nullable(),
  min_rounds: z.number(),
  max_rounds: z.number(),
  check_min_rounds: z.number(),
  extended_max_rounds: z.number(),
  noise_band: z.number(),
  max_steps: z.number().nullable(),
});
export type BisectRun = z.infer<typeof bisectRunSchema>;

export const runJsonSchema = z.object({
  tunebench_run: z.literal(RUN_VERSION),
  /** Absent in runs written before statuses existed: a result without a stop means finished. */
  status: z.enum(RUN_STATUSES).optional(),
  experiment: z.string(),
  run_id: z.string(),
  started_at: z.string(),
  experiment_file: z.string(),
  experiment_text: z.string(),
  /**
   * The experiment as validated when the run started (defaults filled in); the experiment schema
   * checks it again on use.
   */
  resolved: z.record(z.string(), z.unknown()),
  workload: z.string(),
  limit: z.object({ mechanism: z.string(), bytes: z.number().nullable(), timeout_seconds: z.number() }),
  environment: fingerprintSchema,
  /** One entry per resume: when, on which host, how many trials were replayed (absent in early runs). */
  resumes: z
    .array(z.object({ at: z.string(), host: z.string(), replayed_trials: z.number(), notes: z.array(z.string()) }))
    .default([]),
  stopped: stopInfoSchema.optional(),
  finished_at: z.string().optional(),
  result: runResultSchema.optional(),
  bisect: bisectRunSchema.optional(),
});
export type RunJson = z.infer<typeof runJsonSchema>;

/** Whether a run finished: status "finished", or (runs from before `status` existed) a result without a stop. */
export function isFinished(run: { status?: string | undefined; result?: unknown }): boolean {
  return run.status === 'finished' || (run.status === undefined && run.result !== undefined);
}
