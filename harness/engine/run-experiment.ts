// Runs an experiment end to end: validate, create the run directory, run each stage, write the
// outputs. A resumed run (resumeExperiment) replays its journal through the same stages, so the
// completed trials are not run again and the search retraces its decisions up to the stop.
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ConfigError, DetachedError, StoppedError, StoreError } from '../errors.js';
import { stageName } from '../experiment/checks.js';
import { type LoadedExperiment } from '../experiment/load.js';
import { refuseMemoryAboveMachine } from '../experiment/machine-fit.js';
import type { ExecutorSpec, Experiment } from '../experiment/schema.js';
import { formatBytes } from '../experiment/units.js';
import { argsWritten, buildChosenConfig, writeChosenConfig, type ChosenConfigArgs } from '../report/chosen-config.js';
import { writeReports } from '../report/write.js';
import { noteText } from '../report/notes.js';
import { kindAnswer } from '../report/kinds.js';
import { readJournal, type Journal } from '../store/journal.js';
import { createRunDir, type RunDir } from '../store/run-dir.js';
import { fingerprint } from '../telemetry/fingerprint.js';
import { planLimit, type CudaUse } from '../trial/limits.js';
import { endLeftovers } from '../trial/process.js';
import { scopeOf } from '../trial/owner.js';
import { LOCK_FILE } from '../store/lock.js';
import { WarmPool } from '../trial/warm-pool.js';
import { createWorkload } from '../workloads/index.js';
import type { Workload } from '../workloads/workload.js';
import { localExecutor, type Executor } from '../executors/executor.js';
import { createExecutor } from '../executors/index.js';
import { deviceOf, stageInput, TrialRunner, type RunContext } from './context.js';
import { thawed } from '../util/frozen.js';
import { initialState, revise, type RunState } from './revisions.js';
import { onHardExit } from './hard-exit.js';
import { printedCommand } from '../util/shell.js';
import type { Progress } from '../executors/progress.js';
import { finalConfirmations } from './stages/final-confirm.js';
import { lowerAfterFailure } from './stages/lower-after-failure.js';
import { plannedTrials, runStage, STAGE_KIND_MODULES, stageFailed } from './kinds/index.js';
import {
  type Evidence,
  type Fingerprint,
  type Outcome,
  OUTCOMES,
  RUN_VERSION,
  type RunWarning,
  type StopInfo,
  type TrialRecord,
} from '../domain/index.js';
import { writeRunJson, type RunJson, type RunResult } from '../experiment/run-file.js';
import type { StageOutcome } from '../experiment/schema.js';
import { loadExperiment } from './load.js';

export interface RunOptions {
  experimentPath: string;
  /** An experiment built in memory (the one-line commands); experimentPath is then not read. */
  loaded?: LoadedExperiment;
  outDir: string;
  progress: Progress;
  signal?: AbortSignal;
  /** Changes the loaded experiment before it runs (e.g. `tunebench claims --max-pairs`). */
  adjust?: (experiment: Experiment) => void;
  /** --executor: overrides the experiment's executor kind. */
  executor?: ExecutorSpec['kind'];
  noWait?: boolean;
  /** false: the report's charts are written as specs, not drawn (`tunebench report` draws them). */
  drawCharts?: boolean;
}

export async function runExperiment(opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const { experiment, source, text } = opts.loaded ?? loadExperiment(opts.experimentPath);
  opts.adjust?.(experiment);
  if (opts.executor) experiment.executor = { ...experiment.executor, kind: opts.executor };
  refuseMemoryAboveMachine(experiment);
  const workload: Workload = createWorkload(experiment.workload, experiment.seed, source);
  const env = fingerprint(process.cwd(), workload.python);
  const mechanism = preflightLimit(experiment, env);
  const dir = createRunDir(opts.outDir, experiment.name);
  const runJson = newRunJson({
    loaded: { experiment, source, text },
    runId: dir.runId,
    started,
    workload: workload.description,
    mechanism,
    env,
  });
  try {
    writeRunJson(dir, runJson);
  } catch (error) {
    dir.lock.release();
    throw error;
  }
  return execute({
    dir,
    runJson,
    experiment,
    workload,
    mechanism,
    env,
    started,
    replay: [],
    progress: opts.progress,
    signal: opts.signal,
    noWait: opts.noWait ?? false,
    drawCharts: opts.drawCharts ?? true,
  });
}

export interface Execution {
  dir: RunDir;
  runJson: RunJson;
  experiment: Experiment;
  workload: Workload;
  mechanism: string;
  env: Fingerprint;
  started: number;
  replay: readonly TrialRecord[];
  progress: Progress;
  signal?: AbortSignal | undefined;
  /** Default: the local executor. */
  executor?: Executor;
  /** --no-wait: submit to SLURM and return. */
  noWait?: boolean;
  /** false: the report's charts are written as specs only (see RunOptions.drawCharts). */
  drawCharts?: boolean;
}

export function preflightLimit(experiment: Experiment, env: Fingerprint): string {
  try {
    return planLimit(experiment.limits.memory, experiment.limits.mechanism, undefined, cudaUse(experiment, env))
      .mechanism;
  } catch (error) {
    throw new ConfigError(`limits: ${(error as Error).message}`, [], { cause: error });
  }
}

/**
 * Whether the workload's processes may start CUDA: a fixed `device` or `execution_provider` of cuda
 * declares it; a program of the user's on a machine with a GPU may (a PyTorch script picks the GPU when
 * it sees one). Such a trial never gets an address-space cap (trial/limits.ts).
 */
export function cudaUse(experiment: Experiment, env: Pick<Fingerprint, 'gpu'>): CudaUse {
  const p = experiment.workload.params as Record<string, unknown> | undefined;
  if (p?.['device'] === 'cuda' || p?.['execution_provider'] === 'cuda') return 'declared';
  return env.gpu !== null && experiment.workload.kind === 'command' ? 'possible' : 'none';
}

/** The command that continues this run. */
function resumeCommand(dir: string): string {
  return printedCommand(['tunebench', 'run', '--resume', dir]);
}

/**
 * Runs every stage (replaying the journal first on resume), then writes run.json, the chosen config
 * and the reports.
 */
export async function execute(x: Execution): Promise<RunResult> {
  // If tunebench must exit at once (a second signal, an uncaught error), run.json still says why and
  // the lock is released: the run stays resumable.
  const off = onHardExit((status, reason) => {
    let completed = 0;
    try {
      completed = readJournal(x.dir.journal.path).records.length;
    } catch {
      // The journal speaks for itself on resume.
    }
    writeRunJson(x.dir, {
      ...x.runJson,
      status,
      stopped: { reason, stage: '', completed_trials: completed, stage_trials: 0, resume: resumeCommand(x.dir.path) },
    });
    x.dir.lock.release();
    return resumeCommand(x.dir.path);
  });
  try {
    return await executeLocked(x);
  } finally {
    off();
    x.dir.lock.release();
  }
}

/** What every stage of the run shares, from the experiment and the workload. */
export function runContext(
  x: Pick<Execution, 'experiment' | 'workload' | 'env' | 'progress' | 'replay' | 'signal' | 'executor' | 'noWait'> & {
    dir?: RunDir;
    stageEnvironments?: ReadonlyMap<number, { host: string; environment: Fingerprint }>;
    /** Of a rebuild that reads the journal and never writes it: every replayed trial counts as journaled. */
    journalReadOnly?: boolean;
    /** Wraps the executor (a SLURM stage worker tags each record with its node). */
    wrapExecutor?: (e: Executor) => Executor;
  },
  journal: Journal,
  scratchDir: string,
): RunContext {
  const { experiment, workload, env } = x;
  const warm =
    experiment.workload.kind === 'command' && experiment.workload.warm_start === 'fork'
      ? new WarmPool(experiment.limits.timeout, (m) => x.progress.note(m), scopeOf(scratchDir))
      : undefined;
  // A whole-process trial counts the run's batch parameter as its samples: the max-batch stage's param.
  const batchStage = experiment.stages.find((s) => s.kind === 'max-batch');
  const trial = {
    workload,
    limits: experiment.limits,
    cuda: cudaUse(experiment, env),
    scratchDir,
    ...(batchStage?.kind === 'max-batch' ? { samplesParam: batchStage.param } : {}),
    ...(x.signal ? { signal: x.signal } : {}),
    ...(warm ? { warm } : {}),
  };
  const executor =
    x.executor ??
    (x.dir
      ? createExecutor(experiment.executor, {
          runDir: x.dir.path,
          experiment: experiment.name,
          trial,
          progress: x.progress,
          noWait: x.noWait ?? false,
        })
      : localExecutor(trial));
  return {
    experiment,
    trial,
    trials: new TrialRunner(journal, x.wrapExecutor ? x.wrapExecutor(executor) : executor, x.progress, {
      replay: x.replay,
      journaled: x.journalReadOnly ? Infinity : x.replay.length,
      ...(x.dir ? { lock: x.dir.lock } : {}),
    }),
    progress: x.progress,
    initialConfig: { ...workload.fixedParams },
    environment:
      `${env.host} (${env.cpu.model}, ` +
      `${env.cpu.cores} cores${env.gpu ? `, ${env.gpu.count} x ${env.gpu.name}` : ', no GPU'})`,
    // On SLURM the GPUs are on the compute nodes: a GPU request counts, not the login node.
    hasCuda: env.gpu !== null || (experiment.executor.kind === 'slurm' && /gpu/.test(experiment.executor.gres ?? '')),
    device: deviceOf(env),
    ...(x.stageEnvironments
      ? {
          stageDevices: new Map(
            [...x.stageEnvironments].map(([k, e]) => [k, deviceOf(e.environment, e.host)] as const),
          ),
        }
      : {}),
  };
}

/** Where a run stands: its state so far, and the stage it is in (what a stop reports). */
export interface RunCursor {
  state: RunState;
  current: string;
}

/**
 * Runs the stages in order (up to and including `until`), each starting from what the earlier ones
 * chose; each stage's outcome and the revisions after it go through `revise` into `cursor.state`. On
 * SLURM a max-batch stage first runs whole inside one allocation; its trials then replay here.
 */
export async function runStages(run: RunContext, cursor: RunCursor, until = Infinity): Promise<void> {
  for (const [i, stage] of run.experiment.stages.entries()) {
    if (i > until) break;
    const name = stageName(stage, i);
    cursor.current = name;
    run.progress.stage(name, `${stage.kind} on ${run.trial.workload.description}`);
    // Replayed in a later stage's allocation: the stage retraces its decisions on the device it ran on.
    let device = run.stageDevices?.get(i) ?? run.device;
    if (stage.kind === 'max-batch' && run.trials.executor.allocateStage) {
      const allocation = await run.trials.executor.allocateStage(i, name, stage.constraint);
      run.trials.addReplay(allocation.records);
      // The stage replays here what ran there: it must see the allocation's device, not this one.
      device = deviceOf(allocation.environment, allocation.host);
    }
    const before = cursor.state;
    const first = await runStage(stageInput(run, before, device), stage, name);
    // The stage chose nothing because its configs OOMed at the batch an earlier stage chose: lower it and
    // run the stage again.
    const lowered = await lowerAfterFailure(stageInput(run, before), first, {
      spec: stage,
      name,
      rerun: (state) => runStage(stageInput(run, state, device), stage, name),
      kinds: STAGE_KIND_MODULES,
    });
    const outcome = lowered.outcome;
    for (const note of outcome.notes) run.progress.note(noteText(note));
    // The stage's answer, in the words summary.md uses: a claim's verdict sentence, a compare's arms, the max.
    run.progress.note(`answer: ${kindAnswer(STAGE_KIND_MODULES, outcome).line}`);
    cursor.state = revise(before, [...lowered.revisions, { kind: 'stage', outcome }]);
    // The batch failed and nothing lower held: later stages would run at a batch that failed.
    if (lowered.revisions.some((r) => r.kind === 'failure')) break;
    // The workload failed (a crash, a typo): no later stage can run it; the run ends with the failure.
    if (stageFailed(outcome, run.trials.records)) break;
  }
}

async function executeLocked(x: Execution): Promise<RunResult> {
  const { dir, experiment, env } = x;
  // A killed run's trials may still run (and write): they end before anything of this run starts.
  const leftovers = endLeftovers(dir.scratch);
  const other = leftovers.live[0];
  if (other)
    throw new StoreError(
      `${dir.path}: another tunebench (pid ${other.pid}) is still running trials of this run directory, although ` +
        `its lock file (${LOCK_FILE}) is gone (a workload may have deleted it); two runs never write one journal: ` +
        `wait for it to finish, or stop it (kill ${other.pid}) and resume`,
    );
  if (leftovers.ended > 0)
    x.progress.note(
      `ended ${leftovers.ended} process(es) of this directory's trials that an earlier, killed tunebench left running`,
    );
  if (leftovers.unknown.length > 0)
    x.progress.note(
      `left ${leftovers.unknown.length} trial cgroup(s) of this directory alone (${leftovers.unknown[0]}): their ` +
        'tunebench runs in another PID namespace (a container) and cannot be proven gone; remove them once it has ended',
    );
  const run = runContext(x, dir.journal, dir.scratch);
  const { records } = run.trials;
  x.progress.plan?.(experiment.stages.map((s, i) => ({ name: stageName(s, i), trials: plannedTrials(s) })));
  const cursor: RunCursor = { state: initialState(run.initialConfig), current: '' };
  try {
    await runStages(run, cursor);
    cursor.current = 'final confirmation';
    cursor.state = await finalConfirmations(run, cursor.state);
  } catch (error) {
    const current = cursor.current;
    const stop: StopInfo = {
      reason: x.signal?.aborted
        ? String((x.signal.reason as Error | undefined)?.message ?? 'stopped')
        : (error as Error).message,
      stage: current,
      completed_trials: records.length,
      stage_trials: records.filter((r) => r.stage === current).length,
      resume: resumeCommand(dir.path),
    };
    if (error instanceof DetachedError) {
      // --no-wait: the trials are in SLURM's hands; run.json says so and collect goes on later.
      writeRunJson(dir, { ...x.runJson, status: 'waiting' });
      throw new DetachedError(
        `${error.message}; ${stop.completed_trials} trial(s) are journaled. ` +
          `Gather the results with: tunebench collect ${JSON.stringify(dir.path)}`,
        { cause: error },
      );
    }
    await savePartial(x, run, cursor.state, stop, x.signal?.aborted ? 'stopped' : 'failed');
    if (x.signal?.aborted) {
      throw new StoppedError(
        `${stop.reason}: ${stop.completed_trials} completed trial(s) are in ${dir.journal.path}; ` +
          'the interrupted trial was not recorded and will run again. ' +
          `Partial report: ${join(dir.path, 'report.html')}. Resume with: ${stop.resume}`,
        { cause: error },
      );
    }
    if (error instanceof StoreError) {
      throw new StoreError(
        `${error.message}. ${stop.completed_trials} completed trial(s) are safe in ${dir.journal.path}; ` +
          `fix the cause, then resume with: ${stop.resume}`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    run.trial.warm?.close();
  }
  // The journal must hold every trial of the run before the run can finish on it.
  dir.journal.verify('by the end of the run');
  const result = buildResult(x, run, cursor.state);
  const { stages: outcomes, evidence } = result;
  const allocated = records.find((r) => r.node && outcomes.some((o) => o.kind === 'max-batch' && o.name === r.stage));
  writeChosenConfig(
    dir.path,
    buildChosenConfig({
      experiment: experiment.name,
      runId: dir.runId,
      config: result.chosen,
      evidence,
      fingerprint: env,
      memoryLimit: experiment.limits.memory ?? null,
      experimentPath: relative(process.cwd(), x.runJson.experiment_file) || x.runJson.experiment_file,
      ...(allocated?.node ? { placement: { stage: allocated.stage, ...allocated.node } } : {}),
      workload: x.workload,
      ...maxBatchExtras(outcomes),
    }),
  );
  const finished: RunJson = { ...x.runJson, status: 'finished', finished_at: new Date().toISOString(), result };
  // The reports first, then run.json as "finished": that write is the commit point. A run killed
  // before it resumes (replaying every trial, running none) and writes the reports again.
  const done = await finishReports(dir.path, finished, records, x.drawCharts ?? true);
  writeRunJson(dir, done);
  rmSync(dir.scratch, { recursive: true, force: true });
  return done.result!;
}

/**
 * Writes the reports of a finished run. Every trial is done, so a report that cannot be written
 * never leaves the run unfinished (a resume would only fail the same way): the run finishes with a
 * warning that names the failure and the command that writes the reports again.
 */
async function finishReports(
  path: string,
  finished: RunJson,
  records: readonly TrialRecord[],
  draw: boolean,
): Promise<RunJson> {
  try {
    await writeReports(path, finished, records, { draw, kinds: STAGE_KIND_MODULES });
    return finished;
  } catch (error) {
    const warning: RunWarning = { kind: 'reports-not-written', error: (error as Error).message, run_dir: path };
    return { ...finished, result: { ...finished.result!, warnings: [...finished.result!.warnings, warning] } };
  }
}

/**
 * After a stop or a failure: run.json records it and, when the disk allows, the completed stages get
 * a partial report. A failure here must not hide the original error, so it only adds a note.
 */
async function savePartial(
  x: Execution,
  run: RunContext,
  state: RunState,
  stop: StopInfo,
  status: 'stopped' | 'failed',
): Promise<void> {
  const result = { ...buildResult(x, run, state), stopped: stop };
  const partial: RunJson = { ...x.runJson, status, stopped: stop, result };
  try {
    writeRunJson(x.dir, partial);
    await writeReports(x.dir.path, partial, run.trials.records, {
      draw: x.drawCharts ?? true,
      kinds: STAGE_KIND_MODULES,
    });
  } catch (error) {
    x.progress.note(`could not write the partial report: ${(error as Error).message}`);
  }
}

function buildResult(x: Execution, run: RunContext, state: RunState): RunResult {
  const outcomes = thawed<StageOutcome[]>(state.outcomes);
  const evidence = thawed<Record<string, Evidence>>(state.evidence);
  const { records } = run.trials;
  const { dir, experiment, mechanism, env } = x;
  const warnings: RunWarning[] = [];
  const note = (source: 'resume' | 'journal' | 'slurm', text: string): RunWarning => ({ kind: 'note', source, text });
  if (mechanism === 'none') warnings.push({ kind: 'no-memory-cap' });
  for (const r of x.runJson.resumes) warnings.push(...r.notes.map((n) => note('resume', n)));
  warnings.push(...dir.journal.incidents.map((n) => note('journal', n)));
  warnings.push(...(run.trials.executor.report?.() ?? []).map((n) => note('slurm', n)));
  for (const o of outcomes)
    if (o.kind === 'max-batch' && o.result.status === 'none-fits' && mechanism === 'prlimit-as')
      warnings.push({ kind: 'address-space-too-small', stage: o.name, cap_bytes: experiment.limits.memory! });
  const overCap = records.filter((r) => r.limit.tree_over_cap_bytes !== undefined);
  if (overCap.length > 0)
    warnings.push({
      kind: 'tree-over-cap',
      trials: overCap.length,
      peak_bytes: Math.max(...overCap.map((r) => r.limit.tree_over_cap_bytes!)),
      first_trial: overCap[0]!.index,
      cap_bytes: experiment.limits.memory ?? 0,
    });
  const failedStages = outcomes.filter((o) => stageFailed(o, records)).map((o) => o.name);
  const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of records) byOutcome[r.outcome] += 1;
  return {
    experiment: experiment.name,
    run_id: dir.runId,
    run_dir: dir.path,
    environment:
      `${env.host} (${env.cpu.model}, ${env.cpu.cores} cores), ` +
      `cap ${experiment.limits.memory ? formatBytes(experiment.limits.memory) : 'none'} via ${mechanism}`,
    chosen: { ...state.config },
    evidence,
    stages: outcomes,
    trials: { total: records.length, by_outcome: byOutcome, replayed: x.replay.length },
    wall_seconds: (Date.now() - x.started) / 1000,
    warnings,
    failed_stages: failedStages,
    ...(state.failures.length ? { stage_failures: [...state.failures] } : {}),
    files: {
      run: join(dir.path, 'run.json'),
      journal: dir.journal.path,
      chosen_config: join(dir.path, 'chosen-config.json'),
      chosen_env: join(dir.path, 'chosen-config.env'),
      chosen_yaml: join(dir.path, 'chosen-config.yaml'),
      ...(argsWritten(x.workload, state.config) ? { chosen_args: join(dir.path, 'chosen-config.args') } : {}),
      ...(outcomes.some((o) => o.kind === 'max-batch' && o.result.buckets)
        ? { chosen_buckets: join(dir.path, 'chosen-config.buckets.json') }
        : {}),
      summary: join(dir.path, 'summary.md'),
      report: join(dir.path, 'report.html'),
    },
  };
}

/** The bucket map and the training recipe of the run's max-batch stage (the first that has them), for the chosen config. */
function maxBatchExtras(outcomes: readonly StageOutcome[]): Pick<ChosenConfigArgs, 'buckets' | 'recipe'> {
  const out: Pick<ChosenConfigArgs, 'buckets' | 'recipe'> = {};
  for (const o of outcomes) {
    if (o.kind !== 'max-batch') continue;
    const k = o.result.buckets;
    if (k && !out.buckets)
      out.buckets = {
        param: k.param,
        batch_param: o.result.param,
        map: Object.fromEntries(k.rows.flatMap((r) => (r.chosen === null ? [] : [[String(r.value), r.chosen]]))),
        rows: k.rows.map((r) => ({ value: r.value, batch: r.chosen, max: r.max, tokens: r.tokens, status: r.status })),
        rule: o.result.choose_rule,
        stage: o.name,
      };
    if (o.result.recipe && !out.recipe) out.recipe = o.result.recipe;
  }
  return out;
}

/** The run.json of a run that starts now: what it runs, where, and under which limit (status "running"). */
export function newRunJson(o: {
  loaded: LoadedExperiment;
  runId: string;
  /** Date.now() when the run started. */
  started: number;
  /** The workload's description. */
  workload: string;
  mechanism: RunJson['limit']['mechanism'];
  env: RunJson['environment'];
}): RunJson {
  const { experiment, source, text } = o.loaded;
  return {
    tunebench_run: RUN_VERSION,
    status: 'running',
    experiment: experiment.name,
    run_id: o.runId,
    started_at: new Date(o.started).toISOString(),
    experiment_file: source,
    experiment_text: text,
    resolved: experiment,
    workload: o.workload,
    limit: {
      mechanism: o.mechanism,
      bytes: experiment.limits.memory ?? null,
      timeout_seconds: experiment.limits.timeout,
    },
    environment: o.env,
    resumes: [],
  };
}
