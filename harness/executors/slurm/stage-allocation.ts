// A max-batch stage inside one SLURM allocation, from the coordinator's side: submit `tunebench
// stage-worker` as one job, wait for it (again after a failed allocation, up to `retries`), and read
// back the trials it journaled and the node it ran on.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DetachedError, StoppedError, TrialError } from '../../errors.js';
import type { ExecutorSpec } from '../../experiment/schema.js';
import { readJournal } from '../../store/journal.js';
import { makeDirs } from '../../store/run-dir.js';
import { readCheckedJson } from '../../util/checked-json.js';
import type { StageAllocation } from '../executor.js';
import type { Progress } from '../progress.js';
import { SLURM_DIR } from './batch.js';
import { ACTIVE_STATES, finishedStates, queuedStates, sbatch } from './commands.js';
import { resourceArgs } from './sbatch.js';
import { readStageJob, writeStageJob, type StageJob } from './stage-job.js';
import { stageDoneSchema } from './worker.js';

/** What a stage allocation needs of its coordinator (executor.ts holds the rest). */
export interface StageCoordinator {
  readonly runDir: string;
  readonly spec: ExecutorSpec;
  readonly signal: AbortSignal | undefined;
  readonly noWait: boolean;
  readonly progress: Progress;
  /** The SLURM job name of this experiment's jobs. */
  readonly jobName: string;
  /** Notes a message for the report and says it now. */
  note(message: string): void;
  /** The path of a batch script, written on first use. */
  script(name: 'trial.sh' | 'stage.sh', command: string): string;
  /** Sleeps, waking early when the coordinator is stopped. */
  sleep(seconds: number): Promise<void>;
}

export interface StageRequest {
  /** The stage's index in the experiment. */
  k: number;
  name: string;
  /** The stage's own constraint (a GPU type), replacing the executor's; none keeps the executor's. */
  constraint?: string | undefined;
}

/** Where a stage's job works: its folder under <run>/slurm/, and the done.json its worker writes last. */
interface StageFiles {
  dir: string;
  done: string;
}

/** Runs stage `k` inside one allocation; returns the trials it journaled there and its node. */
export async function allocateStage(c: StageCoordinator, stage: StageRequest): Promise<StageAllocation> {
  const dir = join(c.runDir, SLURM_DIR, `stage-${stage.k}`);
  const files: StageFiles = { dir, done: join(dir, 'done.json') };
  // The job an earlier coordinator submitted for this stage.
  let current = readStageJob(dir);
  let delay = 0.5;
  for (;;) {
    if (existsSync(files.done)) return readStageDone(files);
    if (c.signal?.aborted) throw new StoppedError(`stopped while waiting for the allocation of stage ${stage.name}`);
    current ??= await startStageJob(c, { stage, dir, attempts: 1 });
    const state = await jobState(current.job_id);
    if (ACTIVE_STATES.has(state)) {
      if (c.noWait) throw new DetachedError(`stage ${stage.name} runs as SLURM job ${current.job_id}`);
      await c.sleep(delay);
      delay = Math.min(delay * 1.5, c.spec.poll);
      continue;
    }
    if (existsSync(files.done)) continue;
    current = await submitAgain(c, { stage, dir, current, state });
  }
}

/** What the stage's allocation left: the trials it journaled, its node and its environment. */
function readStageDone(files: StageFiles): StageAllocation {
  const ran = readCheckedJson(
    stageDoneSchema,
    files.done,
    'done.json of a stage allocation',
    'the stage job writes it',
  );
  return {
    records: readJournal(join(files.dir, 'trials.jsonl')).records,
    host: ran.node.host,
    environment: ran.environment,
  };
}

/** SLURM's state of a job: squeue's while it is queued, else its final state, else UNKNOWN. */
async function jobState(jobId: string): Promise<string> {
  let state = (await queuedStates([jobId])).get(jobId);
  if (!state) state = (await finishedStates([jobId])).get(jobId) ?? 'UNKNOWN';
  return state;
}

/** Submits the stage's job and writes it down, so that a later coordinator waits for it instead. */
async function startStageJob(
  c: StageCoordinator,
  o: { stage: StageRequest; dir: string; attempts: number },
): Promise<StageJob> {
  makeDirs(o.dir);
  const id = await sbatch(
    [
      // The stage's own constraint (a GPU type) replaces the executor's for this allocation.
      ...resourceArgs(c.spec, o.stage.constraint ?? c.spec.constraint),
      `--job-name=${c.jobName}-${o.stage.name}`.slice(0, 60),
      `--output=${join(o.dir, 'slurm-%j.log')}`,
    ],
    c.script('stage.sh', 'stage-worker'),
    ['--stage', String(o.stage.k)],
  );
  const job = { job_id: id, attempts: o.attempts };
  writeStageJob(o.dir, job);
  c.progress.note(
    `slurm: submitted job ${id}: ` +
      `stage ${o.stage.name} runs inside one allocation (every probe a fresh process on the same node)`,
  );
  return job;
}

/** The stage's job ended without done.json: submit it again while retries allow, else fail the stage. */
async function submitAgain(
  c: StageCoordinator,
  o: { stage: StageRequest; dir: string; current: StageJob; state: string },
): Promise<StageJob> {
  const { stage, current, state } = o;
  if (current.attempts <= c.spec.retries) {
    c.note(
      `the allocation of stage ${stage.name} (job ${current.job_id}) ended ${state}; ` +
        `submitting it again (attempt ${current.attempts + 1} of ${c.spec.retries + 1})`,
    );
    return startStageJob(c, { stage, dir: o.dir, attempts: current.attempts + 1 });
  }
  throw new TrialError(
    `the allocation of stage ${stage.name} (SLURM job ${current.job_id}) ` +
      `ended ${state} after ${current.attempts} attempt(s); see ${join(o.dir, `slurm-${current.job_id}.log`)}`,
  );
}
