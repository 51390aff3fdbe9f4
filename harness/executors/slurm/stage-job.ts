// The job of a max-batch stage that runs inside one allocation: <run>/slurm/stage-<k>/job.json holds
// the SLURM job the coordinator submitted and how many times, so that a later coordinator (collect,
// or a resumed run) waits for that job instead of submitting the stage twice.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { StoreError } from '../../errors.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { CheckedFileError, readCheckedJson } from '../../util/checked-json.js';

export const stageJobSchema = z.object({
  job_id: z.string().regex(/^\d+$/, 'expected a SLURM job id'),
  /** Submissions of the stage so far (1 after the first). */
  attempts: z.number().int().positive(),
});
export type StageJob = z.infer<typeof stageJobSchema>;

export const stageJobPath = (stageDir: string) => join(stageDir, 'job.json');

export function writeStageJob(stageDir: string, job: StageJob): void {
  writeJsonAtomic(stageJobPath(stageDir), job);
}

/**
 * The stage's job, or null before the first submission. A damaged or foreign file stops the run
 * (a StoreError): its job may still be running, and a second allocation would run the stage twice.
 */
export function readStageJob(stageDir: string): StageJob | null {
  const path = stageJobPath(stageDir);
  if (!existsSync(path)) return null;
  const fix = `cancel the stage's SLURM job if squeue still lists it, then remove ${path} to submit the stage again`;
  try {
    return readCheckedJson(stageJobSchema, path, 'the job file of a SLURM stage allocation', fix);
  } catch (error) {
    throw new StoreError(
      error instanceof CheckedFileError
        ? error.message
        : `${path} cannot be read (${(error as Error).message}); ${fix}`,
      { cause: error },
    );
  }
}
