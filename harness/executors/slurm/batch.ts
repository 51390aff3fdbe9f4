// A batch on disk, shared by the coordinator and the array tasks through the run directory:
// <run>/slurm/<batch>/batch.json (the trial specs and every submission) and task-<i>.json (the record
// a task wrote, atomically); SLURM writes each task's output to slurm-<job>_<task>.log beside them
// (sbatch --output in executor.ts). One file per task: tasks never share a file.
// Both files are read back through their schema: the shape is written once, here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  configSchema,
  plateauRuleSchema,
  RECORD_VERSION,
  roleSchema,
  trialRecordSchema,
  type TrialRecord,
} from '../../domain/index.js';
import { StoreError } from '../../errors.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { makeDirs } from '../../store/run-dir.js';
import { CheckedFileError, readCheckedJson } from '../../util/checked-json.js';
import { specKey, type TrialSpec } from '../executor.js';

export const SLURM_DIR = 'slurm';

const count = z.number().int().nonnegative();

/** A planned trial as batch.json keeps it (executor.ts's TrialSpec). */
export const trialSpecSchema = z.object({
  stage: z.string(),
  role: roleSchema,
  config: configSchema,
  measure: z.object({
    warmupSteps: count,
    steps: count,
    epochs: count.optional(),
    plateau: plateauRuleSchema.optional(),
  }),
  argv: z.array(z.string()).readonly().optional(),
}) satisfies z.ZodType<TrialSpec>;

export const submissionSchema = z.object({
  job_id: z.string().regex(/^\d+$/, 'expected a SLURM job id'),
  /** Batch task numbers covered; array index = task - offset. */
  tasks: z.array(count),
  offset: count,
  at: z.string(),
});

export const batchFileSchema = z.object({
  /** Journal index of task 0. */
  first: count,
  specs: z.array(trialSpecSchema),
  submissions: z.array(submissionSchema),
  /** Submissions per task so far (1 after the first). */
  attempts: z.record(z.string(), count),
  /** Task number -> why it was given up (its record is synthesized). */
  given_up: z.record(z.string(), z.string()),
});
export type BatchFile = z.infer<typeof batchFileSchema>;

export function batchDir(runDir: string, id: string): string {
  return join(runDir, SLURM_DIR, id);
}

/** The batch in `dir`, or null when there is none; a damaged or foreign batch.json is a StoreError. */
export function readBatch(dir: string): BatchFile | null {
  const path = join(dir, 'batch.json');
  if (!existsSync(path)) return null;
  try {
    return readCheckedJson(
      batchFileSchema,
      path,
      'the batch file of a SLURM batch',
      `remove the folder ${dir} to submit the batch again`,
    );
  } catch (error) {
    // A StoreError, as before: the engine adds where the completed trials are and how to resume.
    throw new StoreError(
      error instanceof CheckedFileError
        ? error.message
        : `${path} cannot be read (${(error as Error).message}); remove the folder ${dir} to submit the batch again`,
      { cause: error },
    );
  }
}

export function writeBatch(dir: string, batch: BatchFile): void {
  makeDirs(dir);
  writeJsonAtomic(join(dir, 'batch.json'), batch);
}

export function sameSpecs(a: readonly TrialSpec[], b: readonly TrialSpec[]): boolean {
  return a.length === b.length && a.every((s, i) => specKey(s) === specKey(b[i]!));
}

export const taskResultPath = (dir: string, task: number) => join(dir, `task-${task}.json`);

/** What a task left: its record, nothing yet, or a file that cannot be used (why: file, line, field). */
export type TaskResult =
  { kind: 'record'; record: TrialRecord } | { kind: 'none' } | { kind: 'damaged'; problem: string };

/**
 * The record a task wrote (worker.ts writes it atomically, so a file that fails its schema was
 * damaged or put there by something else): such a task counts as failed, and may be retried.
 */
export function readTaskResult(dir: string, task: number): TaskResult {
  const path = taskResultPath(dir, task);
  if (!existsSync(path)) return { kind: 'none' };
  try {
    return {
      kind: 'record',
      record: readCheckedJson(
        trialRecordSchema,
        path,
        'the result file of a SLURM array task',
        'the task counts as failed: it is submitted again while retries allow, else recorded as a crash',
      ),
    };
  } catch (error) {
    if (error instanceof CheckedFileError) return { kind: 'damaged', problem: error.message };
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'none' };
    return {
      kind: 'damaged',
      problem: `${path}: cannot be read (${(error as Error).message}); the task counts as failed`,
    };
  }
}

/** The record of a task given up: a crash, with why, and none of a trial's measurements. */
export function givenUpRecord(spec: TrialSpec, index: number, reason: string): TrialRecord {
  return {
    v: RECORD_VERSION,
    index,
    stage: spec.stage,
    role: spec.role,
    config: spec.config,
    ...(spec.argv ? { argv: [...spec.argv] } : {}),
    outcome: 'crash',
    reason,
    exit_code: null,
    signal: null,
    steps: [],
    warmup_steps: 0,
    samples_per_second: null,
    step_seconds: null,
    peak_rss_bytes: null,
    peak_limited_bytes: null,
    limit: { mechanism: 'none', bytes: null },
    telemetry: {
      interval_ms: 0,
      summary: { cpu_cores: null, machine_cpu: null, rss_bytes: null, processes: null, gpus: [] },
      series: { t: [], cpu_cores: [], per_core: [], rss_bytes: [], processes: [], gpus: [] },
    },
    wall_seconds: 0,
    started_at: new Date().toISOString(),
    malformed_events: 0,
    stderr_tail: '',
    patterns_version: 0,
    ended_by: { by: 'not-run' },
  };
}
