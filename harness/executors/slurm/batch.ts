// A batch on disk, shared by the coordinator and the array tasks through the run directory:
// <run>/slurm/<batch>/batch.json (the trial specs and every submission), task-<i>.json (the record
// a task wrote, atomically) and task-<i>.log (its output). One file per task: tasks never share a file.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from '../../errors.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { makeDirs } from '../../store/run-dir.js';
import type { TrialRecord } from '../../trial/record.js';
import { specKey, type TrialSpec } from '../executor.js';

export const SLURM_DIR = 'slurm';

export interface Submission {
  job_id: string;
  /** Batch task numbers covered; array index = task - offset. */
  tasks: number[];
  offset: number;
  at: string;
}

export interface BatchFile {
  /** Journal index of task 0. */
  first: number;
  specs: TrialSpec[];
  submissions: Submission[];
  /** Submissions per task so far (1 after the first). */
  attempts: Record<string, number>;
  /** Task number -> why it was given up (its record is synthesized). */
  given_up: Record<string, string>;
}

export function batchDir(runDir: string, id: string): string {
  return join(runDir, SLURM_DIR, id);
}

export function readBatch(dir: string): BatchFile | null {
  const path = join(dir, 'batch.json');
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as BatchFile;
  } catch (error) {
    throw new StoreError(`${path} is not valid JSON (${(error as Error).message}); remove the folder ${dir} to submit the batch again`, { cause: error });
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
export const taskLogPath = (dir: string, task: number) => join(dir, `task-${task}.log`);

/** The record a task wrote, or null while there is none. */
export function readTaskResult(dir: string, task: number): TrialRecord | null {
  const path = taskResultPath(dir, task);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as TrialRecord;
  } catch {
    return null; // written atomically, so this is damage: the task counts as failed and may be retried
  }
}
