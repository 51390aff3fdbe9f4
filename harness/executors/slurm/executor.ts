// The SLURM executor: a stage's planned trials go out as one job array (sbatch --array=...%K, split
// at the cluster's MaxArraySize); each array task runs `tunebench trial` and writes its record to the
// shared run directory; the coordinator polls squeue/sacct with backoff, submits failed tasks again
// (up to `retries`), and hands the records back in journal order. A max-batch stage runs whole inside
// one allocation (`tunebench stage-worker`), so every probe sees the same GPU type.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TrialRecord } from '../../domain/index.js';
import { DetachedError, TrialError } from '../../errors.js';
import type { ExecutorSpec } from '../../experiment/schema.js';
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
import { firstPoll, nextAction, type Action, type Policy, type Poll, type TaskView } from './next-action.js';
import { arrayRanges, resourceArgs, splitForArrays, writeScript } from './sbatch.js';
import { allocateStage, type StageCoordinator } from './stage-allocation.js';

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
  const c = coordinator(o);
  return {
    kind: 'slurm',
    plan: (first, specs) => plan(c, { first, specs }),
    run: async (index, spec) => {
      let found = findBatch(c.batches, index, spec);
      if (!found) {
        await plan(c, { first: index, specs: [spec] });
        found = findBatch(c.batches, index, spec)!;
      }
      return collect(c, found);
    },
    report: () => [...c.notes],
    allocateStage: (k, name, constraint) => allocateStage(c, { k, name, constraint }),
  };
}

/** One coordinator's state: the batches it knows, its notes, and what it looked up or wrote once. */
interface Coordinator extends StageCoordinator {
  readonly batches: Map<string, BatchFile>;
  readonly notes: string[];
  /** The cluster's MaxArraySize, asked once. */
  maxArray(): Promise<number>;
}

/** One task of a batch, as the coordinator knows it. */
interface BatchTask {
  id: string;
  batch: BatchFile;
  task: number;
}

function coordinator(o: SlurmExecutorOptions): Coordinator {
  const notes: string[] = [];
  let maxArray: number | null = null;
  // Each batch script is written once per coordinator: the first submission that needs it writes it.
  const scripts = new Map<string, string>();
  return {
    runDir: o.runDir,
    spec: o.spec,
    signal: o.signal,
    noWait: o.noWait,
    progress: o.progress,
    jobName: `tunebench-${o.experiment.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)}`,
    batches: new Map<string, BatchFile>(),
    notes,
    note: (message) => {
      notes.push(message);
      o.progress.note(`slurm: ${message}`);
    },
    script: (name, command) => {
      const path =
        scripts.get(name) ?? writeScript(o.runDir, name, [process.execPath, MAIN, command, '--run', o.runDir]);
      scripts.set(name, path);
      return path;
    },
    maxArray: async () => (maxArray ??= await maxArraySize()),
    sleep: (seconds) => sleep(seconds, o.signal),
  };
}

/** Sleeps for `seconds`, or until `signal` aborts. */
function sleep(seconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', wake);
      resolve();
    };
    const t = setTimeout(wake, seconds * 1000);
    signal?.addEventListener('abort', wake, { once: true });
  });
}

/** Submits these tasks of a batch as job arrays (split at MaxArraySize), and writes each submission down. */
async function submit(c: Coordinator, o: { id: string; batch: BatchFile; tasks: readonly number[] }): Promise<void> {
  const { id, batch } = o;
  const maxArray = await c.maxArray();
  const dir = batchDir(c.runDir, id);
  for (const chunk of splitForArrays(o.tasks, maxArray)) {
    const indices = chunk.tasks.map((t) => t - chunk.offset);
    const args = [
      ...resourceArgs(c.spec),
      `--job-name=${c.jobName}`,
      `--array=${arrayRanges(indices)}%${c.spec.max_concurrent}`,
      `--output=${join(dir, 'slurm-%A_%a.log')}`,
    ];
    // The script's own arguments follow the script path; sbatch passes them on to every task.
    const jobId = await sbatch(args, c.script('trial.sh', 'trial'), ['--batch', id, '--offset', String(chunk.offset)]);
    batch.submissions.push({ job_id: jobId, tasks: chunk.tasks, offset: chunk.offset, at: new Date().toISOString() });
    for (const t of chunk.tasks) batch.attempts[String(t)] = (batch.attempts[String(t)] ?? 0) + 1;
    writeBatch(dir, batch);
    c.progress.note(
      `slurm: submitted job ${jobId}: ${chunk.tasks.length} trial(s) ` +
        `of ${id} as --array=${arrayRanges(indices)}%${c.spec.max_concurrent}`,
    );
  }
}

/**
 * A batch an earlier coordinator submitted (it was killed, or ran with --no-wait) that holds these
 * trials at these journal indices: b<first>, or an earlier batch whose first trials were merged
 * into the journal before the coordinator stopped.
 */
function submittedBefore(
  runDir: string,
  o: { first: number; specs: readonly TrialSpec[] },
): { id: string; batch: BatchFile } | null {
  const { first, specs } = o;
  const root = join(runDir, SLURM_DIR);
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

/** Takes on these trials from journal index `first`: an earlier coordinator's batch, else a new one submitted now. */
async function plan(c: Coordinator, o: { first: number; specs: readonly TrialSpec[] }): Promise<void> {
  const { first, specs } = o;
  const earlier = submittedBefore(c.runDir, { first, specs });
  if (earlier) {
    // Collect it; never submit the same trials twice.
    c.batches.set(earlier.id, earlier.batch);
    return;
  }
  const id = `b${first}`;
  const dir = batchDir(c.runDir, id);
  if (readBatch(dir)) {
    // Trials at these journal indices were planned differently before (the run's journal was cut
    // back): their task files belong to other trials and must not be read as these.
    c.progress.note(`slurm: ${id} was planned with other trials before; its old task files are removed`);
    rmSync(dir, { recursive: true, force: true });
  }
  const batch: BatchFile = { first, specs: [...specs], submissions: [], attempts: {}, given_up: {} };
  c.batches.set(id, batch);
  writeBatch(dir, batch);
  await submit(c, { id, batch, tasks: specs.map((_, i) => i) });
}

/** The planned task that holds this trial at this journal index, or null. */
function findBatch(batches: ReadonlyMap<string, BatchFile>, index: number, spec: TrialSpec): BatchTask | null {
  for (const [id, batch] of batches) {
    const task = index - batch.first;
    if (task >= 0 && task < batch.specs.length && specKey(batch.specs[task]!) === specKey(spec))
      return { id, batch, task };
  }
  return null;
}

/** SLURM's state of one array task: squeue's while it is queued, else its final state, else UNKNOWN. */
async function taskState(job: string, task: string): Promise<string> {
  const queued = (await queuedStates([job])).get(task);
  if (queued && ACTIVE_STATES.has(queued)) return queued;
  return (await finishedStates([job])).get(task) ?? 'UNKNOWN';
}

/** What one look at a task sees: its files, its latest submission, and SLURM's `state` when just asked. */
function viewTask(c: Coordinator, at: BatchTask, state: string | null): TaskView {
  const { batch, task } = at;
  const dir = batchDir(c.runDir, at.id);
  const sub = [...batch.submissions].reverse().find((s) => s.tasks.includes(task));
  const job = sub ? { id: sub.job_id, task: `${sub.job_id}_${task - sub.offset}` } : null;
  const log = job && state !== null ? join(dir, `slurm-${job.task}.log`) : null;
  return {
    trial: batch.first + task,
    result: readTaskResult(dir, task),
    givenUp: batch.given_up[String(task)] ?? null,
    stopped: c.signal?.aborted ?? false,
    job,
    attempts: batch.attempts[String(task)] ?? 1,
    state,
    log: log && existsSync(log) ? log : null,
  };
}

/** Waits for one task of a batch: its record, or a crash record once its retries are used up. */
async function collect(c: Coordinator, at: BatchTask): Promise<TrialRecord> {
  const policy: Policy = { retries: c.spec.retries, poll: c.spec.poll, noWait: c.noWait };
  let poll = firstPoll();
  // SLURM's state, known for one look after a query; the task's files are read again with it.
  let state: string | null = null;
  for (;;) {
    const action = nextAction(viewTask(c, at, state), poll, policy);
    if ('notes' in action) for (const message of action.notes) c.note(message);
    const step = await follow(c, { at, action, poll });
    if ('record' in step) return step.record;
    ({ poll, state } = step);
  }
}

/** What follows one action: the task's record, or the next look with its poll and SLURM's state (null unless asked). */
type Step = { record: TrialRecord } | { poll: Poll; state: string | null };

/** Does what nextAction decided for a task; `poll` is the one the action was decided with. */
async function follow(c: Coordinator, o: { at: BatchTask; action: Action; poll: Poll }): Promise<Step> {
  const { at, action } = o;
  const { id, batch, task } = at;
  switch (action.kind) {
    case 'collect':
      return { record: { ...action.record, index: batch.first + task } };
    case 'crash':
      return { record: givenUpRecord(batch.specs[task]!, batch.first + task, action.reason) };
    case 'stop':
      throw new TrialError(`stopped while waiting for SLURM task ${task} of ${id}`);
    case 'submit':
      await submit(c, { id, batch, tasks: [task] });
      return { poll: o.poll, state: null };
    case 'query':
      return { poll: o.poll, state: await taskState(action.job, action.task) };
    case 'wait':
      await c.sleep(action.seconds);
      return { poll: action.poll, state: null };
    case 'detach':
      throw new DetachedError(
        `${batch.specs.length} trial(s) of ${id} are queued or running as SLURM job ${action.job}`,
      );
    case 'resubmit':
      await submit(c, { id, batch, tasks: [task] });
      return { poll: action.poll, state: null };
    case 'give-up':
      // Written down, so that a later coordinator records the same crash instead of waiting again.
      batch.given_up[String(task)] = action.reason;
      writeBatch(batchDir(c.runDir, id), batch);
      return { poll: action.poll, state: null };
  }
}
