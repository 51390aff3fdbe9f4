// The SLURM executor: a stage's planned trials go out as one job array (sbatch --array=...%K, split
// at the cluster's MaxArraySize); each array task runs `tunebench trial` and writes its record to the
// shared run directory; the coordinator polls squeue/sacct with backoff, submits failed tasks again
// (up to `retries`), and hands the records back in journal order. A max-batch stage runs whole inside
// one allocation (`tunebench stage-worker`), so every probe sees the same GPU type.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DetachedError, StoppedError, TrialError } from '../../errors.js';
import type { ExecutorSpec } from '../../experiment/schema.js';
import type { Progress } from '../progress.js';
import { readJournal } from '../../store/journal.js';
import { shellQuote } from '../../util/shell.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { makeDirs } from '../../store/run-dir.js';
import type { TrialRecord } from '../../trial/record.js';
import { specKey, type Executor, type TrialSpec } from '../executor.js';
import { batchDir, readBatch, readTaskResult, sameSpecs, SLURM_DIR, writeBatch, type BatchFile } from './batch.js';
import { ACTIVE_STATES, finishedStates, maxArraySize, queuedStates, sbatch } from './commands.js';

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
  /** Runs stage `k` (max-batch) inside one allocation; returns the trials it journaled there. */
  allocateStage(k: number, name: string): Promise<TrialRecord[]>;
}

const MAIN = fileURLToPath(new URL('../../cli/main.js', import.meta.url));
/** Polls that a task may be COMPLETED without its record showing (a shared filesystem's cache). */
const COMPLETED_GRACE_POLLS = 6;

/** sbatch arguments for the resources of every task. */
export function resourceArgs(spec: ExecutorSpec): string[] {
  const args: string[] = [];
  if (spec.partition) args.push(`--partition=${spec.partition}`);
  if (spec.account) args.push(`--account=${spec.account}`);
  if (spec.gres) args.push(`--gres=${spec.gres}`);
  if (spec.cpus_per_task) args.push(`--cpus-per-task=${spec.cpus_per_task}`);
  if (spec.mem) args.push(`--mem=${spec.mem}`);
  if (spec.time) args.push(`--time=${spec.time}`);
  if (spec.constraint) args.push(`--constraint=${spec.constraint}`);
  return [...args, ...spec.extra_args];
}

/** Task numbers as sbatch array ranges: [0,1,2,5] -> "0-2,5". */
export function arrayRanges(indices: readonly number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** Splits task numbers into submissions whose array indices stay below maxArray: (offset, indices). */
export function splitForArrays(tasks: readonly number[], maxArray: number): { offset: number; tasks: number[] }[] {
  const chunks = new Map<number, number[]>();
  for (const t of tasks) {
    const offset = Math.floor(t / maxArray) * maxArray;
    chunks.set(offset, [...(chunks.get(offset) ?? []), t]);
  }
  return [...chunks].sort(([a], [b]) => a - b).map(([offset, ts]) => ({ offset, tasks: ts }));
}

/** The batch script: exec tunebench with fixed arguments; sbatch appends the rest. No parameter values pass through a shell. */
function writeScript(runDir: string, name: string, command: string[]): string {
  const dir = join(runDir, SLURM_DIR);
  makeDirs(dir);
  const path = join(dir, name);
  const text = ['#!/bin/sh', '# Written by tunebench: runs one trial (or one stage) of this run directory.', `exec ${command.map(shellQuote).join(' ')} "$@"`, ''].join('\n');
  writeFileSync(path, text, { mode: 0o755 });
  return path;
}

function crashRecord(spec: TrialSpec, index: number, reason: string): TrialRecord {
  return {
    v: 1,
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
    telemetry: { interval_ms: 0, summary: { cpu_cores: null, machine_cpu: null, rss_bytes: null, processes: null, gpus: [] }, series: { t: [], cpu_cores: [], per_core: [], rss_bytes: [], processes: [], gpus: [] } },
    wall_seconds: 0,
    started_at: new Date().toISOString(),
    malformed_events: 0,
    stderr_tail: '',
    patterns_version: 0,
  };
}

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
      const args = [...resourceArgs(o.spec), `--job-name=${jobName}`, `--array=${arrayRanges(indices)}%${o.spec.max_concurrent}`, `--output=${join(dir, 'slurm-%A_%a.log')}`];
      // The script's own arguments follow the script path; sbatch passes them on to every task.
      const jobId = await sbatch(args, script('trial.sh', 'trial'), ['--batch', id, '--offset', String(chunk.offset)]);
      batch.submissions.push({ job_id: jobId, tasks: chunk.tasks, offset: chunk.offset, at: new Date().toISOString() });
      for (const t of chunk.tasks) batch.attempts[String(t)] = (batch.attempts[String(t)] ?? 0) + 1;
      writeBatch(dir, batch);
      o.progress.note(`slurm: submitted job ${jobId}: ${chunk.tasks.length} trial(s) of ${id} as --array=${arrayRanges(indices)}%${o.spec.max_concurrent}`);
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
      if (batch && batch.submissions.length > 0 && sameSpecs(batch.specs.slice(skip, skip + specs.length), specs)) return { id: name, batch };
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
    await submit(id, batch, specs.map((_, i) => i));
  }

  function findBatch(index: number, spec: TrialSpec): { id: string; batch: BatchFile; task: number } | null {
    for (const [id, batch] of batches) {
      const task = index - batch.first;
      if (task >= 0 && task < batch.specs.length && specKey(batch.specs[task]!) === specKey(spec)) return { id, batch, task };
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

  /** Waits for one task of a batch: its record, or a crash record once its retries are used up. */
  async function collect(id: string, batch: BatchFile, task: number): Promise<TrialRecord> {
    const dir = batchDir(o.runDir, id);
    let delay = 0.5;
    let graceLeft = COMPLETED_GRACE_POLLS;
    let lastState = '';
    for (;;) {
      const record = readTaskResult(dir, task);
      if (record) return { ...record, index: batch.first + task };
      const gaveUp = batch.given_up[String(task)];
      if (gaveUp) return crashRecord(batch.specs[task]!, batch.first + task, gaveUp);
      if (o.signal?.aborted) throw new TrialError(`stopped while waiting for SLURM task ${task} of ${id}`);
      const sub = [...batch.submissions].reverse().find((s) => s.tasks.includes(task));
      if (!sub) {
        await submit(id, batch, [task]);
        continue;
      }
      const taskId = `${sub.job_id}_${task - sub.offset}`;
      let state = (await queuedStates([sub.job_id])).get(taskId);
      if (!state || !ACTIVE_STATES.has(state)) {
        if (readTaskResult(dir, task)) continue;
        state = (await finishedStates([sub.job_id])).get(taskId) ?? 'UNKNOWN';
      }
      if (state !== lastState && state !== 'PENDING' && state !== 'RUNNING' && state !== 'COMPLETING') note(`task ${taskId} (trial ${batch.first + task}) is ${state}${state === 'PREEMPTED' ? ': waiting for it to run again' : ''}`);
      lastState = state;
      const finished = !ACTIVE_STATES.has(state);
      if (finished && (state === 'COMPLETED' || state === 'UNKNOWN') && graceLeft-- > 0) {
        // Finished, but the record is not visible yet: give the shared filesystem a moment.
        await sleep(Math.min(delay, 2));
        continue;
      }
      if (!finished) {
        if (o.noWait) throw new DetachedError(`${batch.specs.length} trial(s) of ${id} are queued or running as SLURM job ${sub.job_id}`);
        await sleep(delay);
        delay = Math.min(delay * 1.5, o.spec.poll);
        continue;
      }
      if (state === 'UNKNOWN') state = 'UNKNOWN (it left the queue, and neither sacct nor scontrol knows its final state: accounting is disabled, or it was cancelled before it started)';
      const attempts = batch.attempts[String(task)] ?? 1;
      const log = join(dir, `slurm-${sub.job_id}_${task - sub.offset}.log`);
      if (attempts <= o.spec.retries) {
        note(`task ${taskId} (trial ${batch.first + task}) ended ${state} without a record; submitting it again (attempt ${attempts + 1} of ${o.spec.retries + 1})`);
        await submit(id, batch, [task]);
        graceLeft = COMPLETED_GRACE_POLLS;
        delay = 0.5;
        continue;
      }
      const why = `SLURM task ${taskId} ended ${state} after ${attempts} attempt(s) without writing a trial record${existsSync(log) ? ` (log: ${log})` : ''}`;
      batch.given_up[String(task)] = why;
      writeBatch(dir, batch);
      note(`${why}; it is recorded as a crash`);
    }
  }

  async function allocateStage(k: number, name: string): Promise<TrialRecord[]> {
    const dir = join(o.runDir, SLURM_DIR, `stage-${k}`);
    const done = join(dir, 'done.json');
    const stateFile = join(dir, 'job.json');
    const start = async (attempts: number): Promise<{ job_id: string; attempts: number }> => {
      makeDirs(dir);
      const id = await sbatch([...resourceArgs(o.spec), `--job-name=${jobName}-${name}`.slice(0, 60), `--output=${join(dir, 'slurm-%j.log')}`], script('stage.sh', 'stage-worker'), ['--stage', String(k)]);
      const job = { job_id: id, attempts };
      writeJsonAtomic(stateFile, job);
      o.progress.note(`slurm: submitted job ${id}: stage ${name} runs inside one allocation (every probe a fresh process on the same node)`);
      return job;
    };
    // The job an earlier coordinator submitted for this stage (written atomically, so whole or absent).
    let current = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { job_id: string; attempts: number }) : null;
    let delay = 0.5;
    for (;;) {
      if (existsSync(done)) return readJournal(join(dir, 'trials.jsonl')).records;
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
        note(`the allocation of stage ${name} (job ${current.job_id}) ended ${state}; submitting it again (attempt ${current.attempts + 1} of ${o.spec.retries + 1})`);
        current = await start(current.attempts + 1);
        continue;
      }
      throw new TrialError(`the allocation of stage ${name} (SLURM job ${current.job_id}) ended ${state} after ${current.attempts} attempt(s); see ${join(dir, `slurm-${current.job_id}.log`)}`);
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
