// The SLURM executor: a stage's planned trials go out as one job array (sbatch --array=...%K, split
// at the cluster's MaxArraySize); each array task runs `tunebench trial` and writes its record to the
// shared run directory; the coordinator polls squeue/sacct with backoff, submits failed tasks again
// (up to `retries`), and hands the records back in journal order. A max-batch stage runs whole inside
// one allocation (`tunebench stage-worker`), so every probe sees the same GPU type.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TrialRecord } from '../../domain/index.js';
import { DetachedError, StoppedError, TrialError } from '../../errors.js';
import type { ExecutorSpec } from '../../experiment/schema.js';
import { readJournal } from '../../store/journal.js';
import { makeDirs } from '../../store/run-dir.js';
import { readCheckedJson } from '../../util/checked-json.js';
import { specKey, type Executor, type StageAllocation, type TrialSpec } from '../executor.js';
import type { Progress } from '../progress.js';
import {
  batchDir,
  givenUpRecord,
  readBatch,
  readTaskResult,
  sameSpecs,
  SLURM_DIR,
  writeBatch,
  type BatchFile,
} from './batch.js';
import { ACTIVE_STATES, finishedStates, maxArraySize, queuedStates, sbatch } from './commands.js';
import { firstPoll, nextAction, type Policy, type TaskView } from './next-action.js';
import { arrayRanges, resourceArgs, splitForArrays, writeScript } from './sbatch.js';
import { readStageJob, writeStageJob, type StageJob } from './stage-job.js';
import { stageDoneSchema } from './worker.js';

export interface SlurmExecutorOptions {
  runDir: string;
  experiment: string;
  spec: ExecutorSpec;
  progress: Progress;
  signal?: AbortSignal | undefined;
  /** Submit and return: the first wait ends the coordinator (tunebench collect goes on later). */
  noWait: boolean;
}

export interface SlurmExecutor extends Executor {
  /** Runs stage `k` (max-batch) inside one allocation; returns the trials it journaled there and its node. */
  allocateStage(k: number, name: string, constraint?: string): Promise<StageAllocation>;
}

const MAIN = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export function slurmExecutor(o: SlurmExecutorOptions): SlurmExecutor {
  const batches = new Map<string, BatchFile>();
  const notes: string[] = [];
  let maxArray: number | null = null;
  const note = (message: string) => {
    notes.push(message);
    o.progress.note(`slurm: ${message}`);
  };
  // Each batch script is written once per coordinator: the first submission that needs it writes it.
  const scripts = new Map<string, string>();
  const script = (name: 'trial.sh' | 'stage.sh', command: string) => {
    const path = scripts.get(name) ?? writeScript(o.runDir, name, [process.execPath, MAIN, command, '--run', o.runDir]);
    scripts.set(name, path);
    return path;
  };
  const jobName = `tunebench-${o.experiment.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)}`;

  async function submit(id: string, batch: BatchFile, tasks: readonly number[]): Promise<void> {
    maxArray ??= await maxArraySize();
    const dir = batchDir(o.runDir, id);
    for (const chunk of splitForArrays(tasks, maxArray)) {
      const indices = chunk.tasks.map((t) => t - chunk.offset);
      const args = [
        ...resourceArgs(o.spec),
        `--job-name=${jobName}`,
        `--array=${arrayRanges(indices)}%${o.spec.max_concurrent}`,
        `--output=${join(dir, 'slurm-%A_%a.log')}`,
      ];
      // The script's own arguments follow the script path; sbatch passes them on to every task.
      const jobId = await sbatch(args, script('trial.sh', 'trial'), ['--batch', id, '--offset', String(chunk.offset)]);
      batch.submissions.push({ job_id: jobId, tasks: chunk.tasks, offset: chunk.offset, at: new Date().toISOString() });
      for (const t of chunk.tasks) batch.attempts[String(t)] = (batch.attempts[String(t)] ?? 0) + 1;
      writeBatch(dir, batch);
      o.progress.note(
        `slurm: submitted job ${jobId}: ${chunk.tasks.length} trial(s) ` +
          `of ${id} as --array=${arrayRanges(indices)}%${o.spec.max_concurrent}`,
      );
    }
  }

  /**
   * A batch an earlier coordinator submitted (it was killed, or ran with --no-wait) that holds these
   * trials at these journal indices: b<first>, or an earlier batch whose first trials were merged
   * into the journal before the coordinator stopped.
   */
  function submittedBefore(first: number, specs: readonly TrialSpec[]): { id: string; batch: BatchFile } | null {
    const root = join(o.runDir, SLURM_DIR);
    if (!existsSync(root)) return null;
    for (const name of readdirSync(root)) {
      const m = /^b(\d+)$/.exec(name);
      if (!m || Number(m[1]) > first) continue;
      const batch = readBatch(join(root, name));
      const skip = first - Number(m[1]);
      if (batch && batch.submissions.length > 0 && sameSpecs(batch.specs.slice(skip, skip + specs.length), specs))
        return { id: name, batch };
    }
    return null;
  }

  async function plan(first: number, specs: readonly TrialSpec[]): Promise<void> {
    const earlier = submittedBefore(first, specs);
    if (earlier) {
      // Collect it; never submit the same trials twice.
      batches.set(earlier.id, earlier.batch);
      return;
    }
    const id = `b${first}`;
    const dir = batchDir(o.runDir, id);
    if (readBatch(dir)) {
      // Trials at these journal indices were planned differently before (the run's journal was cut
      // back): their task files belong to other trials and must not be read as these.
      o.progress.note(`slurm: ${id} was planned with other trials before; its old task files are removed`);
      rmSync(dir, { recursive: true, force: true });
    }
    const batch: BatchFile = { first, specs: [...specs], submissions: [], attempts: {}, given_up: {} };
    batches.set(id, batch);
    writeBatch(dir, batch);
    await submit(
      id,
      batch,
      specs.map((_, i) => i),
    );
  }

  function findBatch(index: number, spec: TrialSpec): { id: string; batch: BatchFile; task: number } | null {
    for (const [id, batch] of batches) {
      const task = index - batch.first;
      if (task >= 0 && task < batch.specs.length && specKey(batch.specs[task]!) === specKey(spec))
        return { id, batch, task };
    }
    return null;
  }

  const sleep = (seconds: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(t);
        o.signal?.removeEventListener('abort', wake);
        resolve();
      };
      const t = setTimeout(wake, seconds * 1000);
      o.signal?.addEventListener('abort', wake, { once: true });
    });

  /** SLURM's state of one array task: squeue's while it is queued, else its final state, else UNKNOWN. */
  async function taskState(job: string, task: string): Promise<string> {
    const queued = (await queuedStates([job])).get(task);
    if (queued && ACTIVE_STATES.has(queued)) return queued;
    return (await finishedStates([job])).get(task) ?? 'UNKNOWN';
  }

  /** Waits for one task of a batch: its record, or a crash record once its retries are used up. */
  async function collect(id: string, batch: BatchFile, task: number): Promise<TrialRecord> {
    const dir = batchDir(o.runDir, id);
    const policy: Policy = { retries: o.spec.retries, poll: o.spec.poll, noWait: o.noWait };
    let poll = firstPoll();
    // SLURM's state, known for one look after a query; the task's files are read again with it.
    let state: string | null = null;
    for (;;) {
      const sub = [...batch.submissions].reverse().find((s) => s.tasks.includes(task));
      const job = sub ? { id: sub.job_id, task: `${sub.job_id}_${task - sub.offset}` } : null;
      const log = job && state !== null ? join(dir, `slurm-${job.task}.log`) : null;
      const view: TaskView = {
        trial: batch.first + task,
        result: readTaskResult(dir, task),
        givenUp: batch.given_up[String(task)] ?? null,
        stopped: o.signal?.aborted ?? false,
        job,
        attempts: batch.attempts[String(task)] ?? 1,
        state,
        log: log && existsSync(log) ? log : null,
      };
      const action = nextAction(view, poll, policy);
      state = null;
      if ('notes' in action) for (const message of action.notes) note(message);
      switch (action.kind) {
        case 'collect':
          return { ...action.record, index: batch.first + task };
        case 'crash':
          return givenUpRecord(batch.specs[task]!, batch.first + task, action.reason);
        case 'stop':
          throw new TrialError(`stopped while waiting for SLURM task ${task} of ${id}`);
        case 'submit':
          await submit(id, batch, [task]);
          break;
        case 'query':
          state = await taskState(action.job, action.task);
          break;
        case 'wait':
          poll = action.poll;
          await sleep(action.seconds);
          break;
        case 'detach':
          throw new DetachedError(
            `${batch.specs.length} trial(s) of ${id} are queued or running as SLURM job ${action.job}`,
          );
        case 'resubmit':
          poll = action.poll;
          await submit(id, batch, [task]);
          break;
        case 'give-up':
          // Written down, so that a later coordinator records the same crash instead of waiting again.
          poll = action.poll;
          batch.given_up[String(task)] = action.reason;
          writeBatch(dir, batch);
          break;
      }
    }
  }

  async function allocateStage(k: number, name: string, constraint?: string): Promise<StageAllocation> {
    const dir = join(o.runDir, SLURM_DIR, `stage-${k}`);
    const done = join(dir, 'done.json');
    const start = async (attempts: number): Promise<StageJob> => {
      makeDirs(dir);
      const id = await sbatch(
        [
          // The stage's own constraint (a GPU type) replaces the executor's for this allocation.
          ...resourceArgs(o.spec, constraint ?? o.spec.constraint),
          `--job-name=${jobName}-${name}`.slice(0, 60),
          `--output=${join(dir, 'slurm-%j.log')}`,
        ],
        script('stage.sh', 'stage-worker'),
        ['--stage', String(k)],
      );
      const job = { job_id: id, attempts };
      writeStageJob(dir, job);
      o.progress.note(
        `slurm: submitted job ${id}: ` +
          `stage ${name} runs inside one allocation (every probe a fresh process on the same node)`,
      );
      return job;
    };
    // The job an earlier coordinator submitted for this stage.
    let current = readStageJob(dir);
    let delay = 0.5;
    for (;;) {
      if (existsSync(done)) {
        const ran = readCheckedJson(
          stageDoneSchema,
          done,
          'done.json of a stage allocation',
          'the stage job writes it',
        );
        return {
          records: readJournal(join(dir, 'trials.jsonl')).records,
          host: ran.node.host,
          environment: ran.environment,
        };
      }
      if (o.signal?.aborted) throw new StoppedError(`stopped while waiting for the allocation of stage ${name}`);
      current ??= await start(1);
      let state = (await queuedStates([current.job_id])).get(current.job_id);
      if (!state) state = (await finishedStates([current.job_id])).get(current.job_id) ?? 'UNKNOWN';
      if (ACTIVE_STATES.has(state)) {
        if (o.noWait) throw new DetachedError(`stage ${name} runs as SLURM job ${current.job_id}`);
        await sleep(delay);
        delay = Math.min(delay * 1.5, o.spec.poll);
        continue;
      }
      if (existsSync(done)) continue;
      if (current.attempts <= o.spec.retries) {
        note(
          `the allocation of stage ${name} (job ${current.job_id}) ended ${state}; ` +
            `submitting it again (attempt ${current.attempts + 1} of ${o.spec.retries + 1})`,
        );
        current = await start(current.attempts + 1);
        continue;
      }
      throw new TrialError(
        `the allocation of stage ${name} (SLURM job ${current.job_id}) ` +
          `ended ${state} after ${current.attempts} attempt(s); see ${join(dir, `slurm-${current.job_id}.log`)}`,
      );
    }
  }

  return {
    kind: 'slurm',
    plan,
    run: async (index, spec) => {
      let found = findBatch(index, spec);
      if (!found) {
        await plan(index, [spec]);
        found = findBatch(index, spec)!;
      }
      return collect(found.id, found.batch, found.task);
    },
    report: () => [...notes],
    allocateStage,
  };
}
