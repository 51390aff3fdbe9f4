// What runs inside SLURM jobs. An array task (`tunebench trial`) runs one planned trial and writes its
// record to its own file in the shared run directory. A stage worker (`tunebench stage-worker`)
// replays the run's journal up to a max-batch stage and runs that stage inside its allocation,
// journaling to slurm/stage-<k>/trials.jsonl. Neither touches the run's journal: the coordinator
// holds the lock and merges. Executors sit below the engine: the CLI hands in the engine's operations.
import { existsSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  deviceName,
  fingerprintSchema,
  trialNodeSchema,
  type Fingerprint,
  type TrialRecord,
} from '../../domain/index.js';
import { ConfigError } from '../../errors.js';
import { readCheckedJson } from '../../util/checked-json.js';
import type { Experiment } from '../../experiment/schema.js';
import { writeJsonAtomic } from '../../store/atomic.js';
import { Journal, JOURNAL_FILE, readJournal } from '../../store/journal.js';
import { makeDirs } from '../../store/run-dir.js';
import { fingerprint } from '../../telemetry/fingerprint.js';
import type { Workload } from '../../workloads/workload.js';
import { localExecutor, type Executor } from '../executor.js';
import type { Progress } from '../progress.js';
import { batchDir, readBatch, SLURM_DIR, taskResultPath } from './batch.js';
import { readRunJson, type RunJson } from '../../experiment/run-file.js';

/** What runContext needs to build what a run's stages share. */
export interface StageInputs {
  experiment: Experiment;
  workload: Workload;
  env: Fingerprint;
  progress: Progress;
  /** Trials that return their record instead of running again. */
  replay: readonly TrialRecord[];
  signal?: AbortSignal | undefined;
  /**
   * Where earlier stages that had allocations of their own ran (their done.json): a stage replayed here
   * retraces its decisions on its own device (a max-batch search places probes against its card's memory).
   */
  stageEnvironments?: ReadonlyMap<number, { host: string; environment: Fingerprint }>;
}

/** The engine's reading of a run (engine/resume.ts); the CLI passes it in. */
export interface RunReader {
  /** The experiment a run directory ran, as resolved when it started, and its workload. */
  experimentOfRun: (run: RunJson, runDir: string) => { experiment: Experiment; workload: Workload };
}

/** The part of the engine's RunContext that the worker reads: the records of its trials. */
export interface WorkerContext {
  trials: { readonly records: readonly TrialRecord[] };
  /** Its warm server, closed when the stage ends. */
  trial: { warm?: { close(): void } };
}

/**
 * The engine's operations that a stage worker runs (engine/run-experiment.ts; the CLI passes them
 * in). `Ctx` is the engine's RunContext, opaque here beyond WorkerContext.
 */
export interface StageRunner<Ctx extends WorkerContext> extends RunReader {
  /** `wrapExecutor`: the worker tags each record with its node. */
  runContext: (
    x: StageInputs & { wrapExecutor: (e: Executor) => Executor },
    journal: Journal,
    scratchDir: string,
  ) => Ctx;
  /** Runs the stages in order from the start, up to and including `until`. */
  runStages: (ctx: Ctx, until: number) => Promise<void>;
}

/** slurm/stage-<k>/done.json: the stage ran whole in this allocation (the coordinator waits for the file). */
export const stageDoneSchema = z.object({
  node: trialNodeSchema,
  environment: fingerprintSchema,
  finished_at: z.string(),
  run_id: z.string(),
  /** Trials this worker ran (the replayed ones not counted). */
  trials: z.number().int().nonnegative(),
});
export type StageDone = z.infer<typeof stageDoneSchema>;

function loadRun(runDir: string, engine: RunReader): { run: RunJson; workload: Workload; experiment: Experiment } {
  const run = readRunJson(
    runDir,
    'the run directory must be on a filesystem that this node shares with the coordinator, undamaged',
  );
  return { run, ...engine.experimentOfRun(run, runDir) };
}

/** Where a trial ran: the node and its device class (GPU name, or the CPU model without one). */
export function nodeOf(env: Fingerprint = fingerprint()): { host: string; device: string; slurm_job: string | null } {
  const job = process.env['SLURM_ARRAY_JOB_ID']
    ? `${process.env['SLURM_ARRAY_JOB_ID']}_${process.env['SLURM_ARRAY_TASK_ID'] ?? ''}`
    : (process.env['SLURM_JOB_ID'] ?? null);
  return { host: hostname(), device: deviceName(env), slurm_job: job };
}

/** `tunebench trial --run <dir> --batch <id> --offset <o> --index <i>`: one array task. */
export async function runArrayTask(o: {
  runDir: string;
  batch: string;
  offset: number;
  index: number;
  engine: RunReader;
  signal?: AbortSignal;
}): Promise<string> {
  const dir = batchDir(o.runDir, o.batch);
  const batch = readBatch(dir);
  if (!batch)
    throw new ConfigError(
      `no batch ${o.batch} in ${join(o.runDir, SLURM_DIR)}: the coordinator writes it before it submits; ` +
        'is the run directory on a shared filesystem?',
    );
  const task = o.offset + o.index;
  const spec = batch.specs[task];
  if (!spec)
    throw new ConfigError(
      `batch ${o.batch} has ${batch.specs.length} trials; ` +
        `task ${task} (offset ${o.offset} + array index ${o.index}) is not one of them`,
    );
  const { experiment, workload } = loadRun(o.runDir, o.engine);
  const scratch = join(dir, `scratch-${task}`);
  makeDirs(scratch);
  const record = await localExecutor({
    workload,
    limits: experiment.limits,
    scratchDir: scratch,
    ...(o.signal ? { signal: o.signal } : {}),
  }).run(batch.first + task, spec);
  // Read back by readTaskResult (batch.ts) through the trial record's schema.
  const path = taskResultPath(dir, task);
  writeJsonAtomic(path, { ...record, node: nodeOf() } satisfies TrialRecord);
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
export async function runStageWorker<Ctx extends WorkerContext>(o: {
  runDir: string;
  stage: number;
  progress: Progress;
  engine: StageRunner<Ctx>;
  signal?: AbortSignal;
}): Promise<string> {
  const { run, experiment, workload } = loadRun(o.runDir, o.engine);
  if (!(o.stage >= 0 && o.stage < experiment.stages.length))
    throw new ConfigError(`--stage ${o.stage}: the experiment has ${experiment.stages.length} stages`);
  const dir = join(o.runDir, SLURM_DIR, `stage-${o.stage}`);
  makeDirs(join(dir, 'scratch'));
  const main = readJournal(join(o.runDir, JOURNAL_FILE)).records;
  const own = new Journal(join(dir, 'trials.jsonl'));
  const earlier = readJournal(own.path);
  if (earlier.truncatedTail) own.rewrite(earlier);
  const replay: TrialRecord[] = [...main, ...earlier.records.filter((r) => r.index >= main.length)];
  const env = fingerprint();
  const stageEnvironments = new Map<number, { host: string; environment: Fingerprint }>();
  for (let k = 0; k < o.stage; k++) {
    const done = join(o.runDir, SLURM_DIR, `stage-${k}`, 'done.json');
    if (!existsSync(done)) continue;
    const ran = readCheckedJson(stageDoneSchema, done, 'done.json of a stage allocation', 'the stage job writes it');
    stageEnvironments.set(k, { host: ran.node.host, environment: ran.environment });
  }
  // Replayed trials (the main journal's and this journal's own) are not journaled again: this
  // journal gets only the trials this worker runs.
  const ctx = o.engine.runContext(
    {
      experiment,
      workload,
      env,
      progress: o.progress,
      replay,
      signal: o.signal,
      stageEnvironments,
      wrapExecutor: (e) => nodeExecutor(e, nodeOf(env)),
    },
    own,
    join(dir, 'scratch'),
  );
  try {
    await o.engine.runStages(ctx, o.stage);
  } finally {
    ctx.trial.warm?.close();
  }
  const done: StageDone = {
    node: nodeOf(env),
    environment: env,
    finished_at: new Date().toISOString(),
    run_id: run.run_id,
    trials: ctx.trials.records.length - main.length,
  };
  writeJsonAtomic(join(dir, 'done.json'), done);
  rmSync(join(dir, 'scratch'), { recursive: true, force: true });
  return dir;
}
