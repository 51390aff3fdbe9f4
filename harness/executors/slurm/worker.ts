// What runs inside SLURM jobs. An array task (`tunebench trial`) runs one planned trial and writes its
// record to its own file in the shared run directory. A stage worker (`tunebench stage-worker`)
// replays the run's journal up to a max-batch stage and runs that stage inside its allocation,
// journaling to slurm/stage-<k>/trials.jsonl. Neither touches the run's journal: the coordinator
// holds the lock and merges.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Experiment } from '../experiment/schema.js';
import { localExecutor, type Executor } from '../executors/executor.js';
import { batchDir, readBatch, SLURM_DIR, taskResultPath } from '../executors/slurm/batch.js';
import { writeJsonAtomic } from '../store/atomic.js';
import { Journal, JOURNAL_FILE, readJournal } from '../store/journal.js';
import { makeDirs, readRunJson } from '../store/run-dir.js';
import { fingerprint, type Fingerprint } from '../telemetry/fingerprint.js';
import type { TrialRecord } from '../trial/record.js';
import type { Workload } from '../workloads/workload.js';
import type { Evidence, StageOutcome } from './context.js';
import type { Progress } from './progress.js';
import { experimentOfRun } from './resume.js';
import { runStages, stageContext, type RunJsonDraft } from './run-experiment.js';

function loadRun(runDir: string): { run: RunJsonDraft; workload: Workload; experiment: Experiment } {
  const run = readRunJson<RunJsonDraft>(runDir, 'the run directory must be on a filesystem that this node shares with the coordinator, undamaged');
  return { run, ...experimentOfRun(run) };
}

/** Where a trial ran: the node and its device class (GPU name, or the CPU model without one). */
export function nodeOf(env: Fingerprint = fingerprint()): { host: string; device: string; slurm_job: string | null } {
  const job = process.env['SLURM_ARRAY_JOB_ID'] ? `${process.env['SLURM_ARRAY_JOB_ID']}_${process.env['SLURM_ARRAY_TASK_ID'] ?? ''}` : (process.env['SLURM_JOB_ID'] ?? null);
  return { host: hostname(), device: env.gpu ? env.gpu.name : `CPU: ${env.cpu.model}`, slurm_job: job };
}

/** `tunebench trial --run <dir> --batch <id> --offset <o> --index <i>`: one array task. */
export async function runArrayTask(o: { runDir: string; batch: string; offset: number; index: number; signal?: AbortSignal }): Promise<string> {
  const dir = batchDir(o.runDir, o.batch);
  const batch = readBatch(dir);
  if (!batch) throw new ConfigError(`no batch ${o.batch} in ${join(o.runDir, SLURM_DIR)}: the coordinator writes it before it submits; is the run directory on a shared filesystem?`);
  const task = o.offset + o.index;
  const spec = batch.specs[task];
  if (!spec) throw new ConfigError(`batch ${o.batch} has ${batch.specs.length} trials; task ${task} (offset ${o.offset} + array index ${o.index}) is not one of them`);
  const { experiment, workload } = loadRun(o.runDir);
  const scratch = join(dir, `scratch-${task}`);
  makeDirs(scratch);
  const record = await localExecutor({ workload, limits: experiment.limits, scratchDir: scratch, ...(o.signal ? { signal: o.signal } : {}) }).run(batch.first + task, spec);
  const path = taskResultPath(dir, task);
  writeJsonAtomic(path, { ...record, node: nodeOf() });
  rmSync(scratch, { recursive: true, force: true });
  return path;
}

/** Runs every trial here, tagged with this node. */
function nodeExecutor(local: Executor, node: ReturnType<typeof nodeOf>): Executor {
  return { ...local, run: async (index, spec, onEvent) => ({ ...(await local.run(index, spec, onEvent)), node }) };
}

/**
 * `tunebench stage-worker --run <dir> --stage <k>`: replays the journal through the stages before k,
 * then runs stage k here. A requeued worker replays its own stage journal first, so no probe runs twice.
 */
export async function runStageWorker(o: { runDir: string; stage: number; progress: Progress; signal?: AbortSignal }): Promise<string> {
  const { run, experiment, workload } = loadRun(o.runDir);
  if (!(o.stage >= 0 && o.stage < experiment.stages.length)) throw new ConfigError(`--stage ${o.stage}: the experiment has ${experiment.stages.length} stages`);
  const dir = join(o.runDir, SLURM_DIR, `stage-${o.stage}`);
  makeDirs(join(dir, 'scratch'));
  const main = readJournal(join(o.runDir, JOURNAL_FILE)).records;
  const own = new Journal(join(dir, 'trials.jsonl'));
  const earlier = readJournal(own.path);
  if (earlier.truncatedTail) own.rewrite(earlier.records);
  const replay: TrialRecord[] = [...main, ...earlier.records.filter((r) => r.index >= main.length)];
  const env = fingerprint();
  // Replayed trials (the main journal's and this journal's own) are not journaled again: this
  // journal gets only the trials this worker runs.
  const ctx = stageContext({ experiment, workload, env, progress: o.progress, replay, signal: o.signal }, own, join(dir, 'scratch'));
  ctx.executor = nodeExecutor(ctx.executor, nodeOf(env));
  const state = { outcomes: [] as StageOutcome[], evidence: {} as Record<string, Evidence>, current: '' };
  await runStages(ctx, state, o.stage);
  writeJsonAtomic(join(dir, 'done.json'), { node: nodeOf(env), environment: env, finished_at: new Date().toISOString(), run_id: run.run_id, trials: ctx.records.length - main.length });
  rmSync(join(dir, 'scratch'), { recursive: true, force: true });
  return dir;
}
