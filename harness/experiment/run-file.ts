// run.json: its schema, whose result holds each stage's outcome (so it is typed here, above the stage
// kinds of the experiment schema), and its reading and writing through store/'s checked file functions.
import { z } from 'zod';
import {
  bisectRunSchema,
  configSchema,
  evidenceSchema,
  fingerprintSchema,
  OUTCOMES,
  RUN_STATUSES,
  RUN_VERSION,
  stageFailureSchema,
  stopInfoSchema,
  storedWarningSchema,
  type TrialRecord,
} from '../domain/index.js';
import { readRunDirThrough } from '../store/read-run.js';
import { readRunJsonThrough, type RunDir, writeRunJsonFile } from '../store/run-dir.js';
import { stageOutcomeSchema } from './schema/stages.js';

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

export const runJsonSchema = z.object({
  /**
   * Formats 1 and 2 are read as format 3: format 1's warnings become warning notes (storedWarningSchema), and
   * the stage notes of formats 1 and 2 become `text` notes (stageNotesSchema); nothing else changed.
   */
  tunebench_run: z
    .union([z.literal(1), z.literal(2), z.literal(RUN_VERSION)])
    .transform((): typeof RUN_VERSION => RUN_VERSION),
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

/**
 * Reads <dir>/run.json through its schema. A file that is not JSON, or not shaped as tunebench
 * writes it, was damaged after tunebench wrote it (it writes it atomically) or is foreign: the error
 * names the file, the line and the field, then what that means for the caller (`consequence`).
 */
export function readRunJson(dir: string, consequence: string): RunJson {
  return readRunJsonThrough(runJsonSchema, dir, consequence);
}

/**
 * Reads a finished or partial run directory (run.json and the journal, both checked), with a clear
 * error for each way it can be unusable.
 */
export function readRunDir(dir: string): { run: RunJson; records: TrialRecord[]; warnings: string[] } {
  return readRunDirThrough(runJsonSchema, dir);
}

export function writeRunJson(dir: RunDir, value: RunJson): void {
  writeRunJsonFile(dir, value);
}
