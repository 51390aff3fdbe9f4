// A run: run.json as tunebench writes it while a run is under way and when it ends, and the result
// that `--json` prints and the reports read besides the journal. One shape, checked when read back.
import { z } from 'zod';
import { configSchema } from './params.js';
import { evidenceSchema, stageFailureSchema, stageOutcomeSchema } from './stages.js';
import { fingerprintSchema } from './telemetry.js';
import { OUTCOMES } from './trial.js';

/** run.json format version: 2 since the run's warnings are typed (format 1 kept them as sentences). */
export const RUN_VERSION = 2;
/** The formats this tunebench reads: format 1 is read through a transform into format 2 (runJsonSchema). */
export const READABLE_RUN_VERSIONS: readonly number[] = [1, 2];

/**
 * A warning of the run, typed: what it is and its figures. The sentence is made where it is printed
 * (report/warnings.ts), so no code reads a warning's wording.
 */
export const runWarningSchema = z.discriminatedUnion('kind', [
  /** limits.memory unset or mechanism "none": nothing capped the trials. */
  z.object({ kind: z.literal('no-memory-cap') }),
  /** A max-batch stage found nothing under an address-space cap too small for the runtime itself. */
  z.object({ kind: z.literal('address-space-too-small'), stage: z.string(), cap_bytes: z.number() }),
  /** Trials whose process tree held more than the per-process (prlimit) cap. */
  z.object({
    kind: z.literal('tree-over-cap'),
    trials: z.number(),
    peak_bytes: z.number(),
    first_trial: z.number(),
    cap_bytes: z.number(),
  }),
  /** Every trial is done, but the reports could not be written. */
  z.object({ kind: z.literal('reports-not-written'), error: z.string(), run_dir: z.string() }),
  /** A sentence from elsewhere: a resume, the journal, SLURM, a rebuilt or partly drawn report, or a run of format 1. */
  z.object({
    kind: z.literal('note'),
    source: z.enum(['resume', 'journal', 'slurm', 'rebuild', 'report', 'format-1']),
    text: z.string(),
  }),
]);
export type RunWarning = z.infer<typeof runWarningSchema>;

/** A warning as run.json holds it: typed, or (format 1) a sentence, read as a note. */
const storedWarningSchema = z.union([
  runWarningSchema,
  z.string().transform((text): RunWarning => ({ kind: 'note', source: 'format-1', text })),
]);

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
  warnings: z.array(storedWarningSchema),
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
  /** Format 1 is read as format 2: its warnings become notes (storedWarningSchema); nothing else changed. */
  tunebench_run: z.union([z.literal(1), z.literal(RUN_VERSION)]).transform((): typeof RUN_VERSION => RUN_VERSION),
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
