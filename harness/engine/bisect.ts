// `tunebench bisect`: a run directory like every run (run.json, trials.jsonl) whose trials are the
// steps of a bisection. Each tested commit is checked out in a worktree under the run directory and
// built; its trials and the good commit's run as the two arms of compareOracle (runCompare's rounds
// and sequential test) through runBisect, journaled as normal trials whose config carries `commit`.
// A resumed bisection replays the journal: the search retraces its steps and no finished trial runs again.
import { join, resolve } from 'node:path';
import { ConfigError, StoppedError } from '../errors.js';
import type { LoadedExperiment } from '../experiment/load.js';
import { commitInfo, commitsBetween, resolveCommit } from '../executors/git.js';
import { runBisect, type BisectResult, type BisectStep, type MeasureFn } from '../search/bisect.js';
import { compareOracle, COMMIT_PARAMETER } from '../search/bisect-step.js';
import type { ArmPlanFn, ArmTrialFn } from '../search/sweep.js';
import { createRunDir, openRunDir, type RunDir } from '../store/run-dir.js';
import { fingerprint } from '../telemetry/fingerprint.js';
import { printedCommand } from '../util/shell.js';
import type { BisectRun, Config, TrialRecord } from '../domain/index.js';
import { commitTrialOf, CommitTrees, pathInRepo, type BuildRecord } from './bisect-commits.js';
import { writeBisectFiles } from './bisect-finish.js';
import type { BisectFile } from '../report/bisect.js';
import type { Progress } from '../executors/progress.js';
import { experimentOfRun, readJournalForResume, readRunJsonForResume } from './resume.js';
import { newRunJson, preflightLimit, runContext } from './run-experiment.js';
import type { RunContext } from './context.js';
import type { TrialSpec } from '../executors/executor.js';
import { writeRunJson, type RunJson } from '../experiment/run-file.js';

/** Rounds and band of each step (the bench's settings: test/bench/bisect.bench.ts). */
export const BISECT_DEFAULTS = {
  minRounds: 5,
  maxRounds: 20,
  checkMinRounds: 20,
  extendedMaxRounds: 40,
  noiseBand: 0.02,
  buildTimeoutSeconds: 600,
} as const;

/** The stage name of a bisection's trials in the journal. */
export const BISECT_STAGE = 'bisect';

/** A step as it is announced: which step, and where its commit sits among the commits after good. */
export interface StepEvent {
  n: number;
  step: BisectStep;
  commits: number;
  /** Journal indices of the step's trials (replayed rounds of a repeat included). */
  trials: number[];
}

export interface BisectRunOptions {
  repo: string;
  good: string;
  bad: string;
  build?: string;
  buildTimeoutSeconds?: number;
  loaded: LoadedExperiment;
  /** False for a one-liner: its command runs from the worktree's root. */
  fromFile: boolean;
  outDir: string;
  progress: Progress;
  signal?: AbortSignal;
  onStep?: (e: StepEvent) => void;
  minRounds?: number;
  maxRounds?: number;
  maxSteps?: number;
  noiseBand?: number;
  drawCharts?: boolean;
}

export interface BisectDone {
  file: BisectFile;
  runDir: string;
}

/** Starts a bisection in a new run directory under `<outDir>/bisect/<experiment>/`. */
export async function runBisection(opts: BisectRunOptions): Promise<BisectDone> {
  const repo = resolve(opts.repo);
  const commits = await commitsBetween(repo, opts.good, opts.bad);
  const good = await resolveCommit(repo, opts.good);
  const { experiment, source } = opts.loaded;
  if (experiment.workload.kind !== 'command')
    throw new ConfigError(
      `bisect: the experiment's workload is "${experiment.workload.kind}"; bisect runs a command workload ` +
        "(the repository's own program), e.g. workload: { kind: command, command: [node, bench.js] }",
    );
  const started = Date.now();
  const bisect: BisectRun = {
    repo,
    good,
    bad: commits.at(-1)!,
    build: opts.build ?? null,
    build_timeout_seconds: opts.buildTimeoutSeconds ?? BISECT_DEFAULTS.buildTimeoutSeconds,
    experiment_in_repo: opts.fromFile ? pathInRepo(repo, resolve(source)) : null,
    min_rounds: opts.minRounds ?? BISECT_DEFAULTS.minRounds,
    max_rounds: opts.maxRounds ?? BISECT_DEFAULTS.maxRounds,
    check_min_rounds: opts.maxRounds ?? BISECT_DEFAULTS.checkMinRounds,
    extended_max_rounds: Math.max(opts.maxRounds ?? 0, BISECT_DEFAULTS.extendedMaxRounds),
    noise_band: opts.noiseBand ?? BISECT_DEFAULTS.noiseBand,
    max_steps: opts.maxSteps ?? null,
  };
  if (bisect.min_rounds > bisect.max_rounds)
    throw new ConfigError(`--min-rounds ${bisect.min_rounds} is more than --max-rounds ${bisect.max_rounds}`);
  const env = fingerprint(repo);
  const mechanism = preflightLimit(experiment, env);
  const dir = createRunDir(join(opts.outDir, 'bisect'), experiment.name);
  const runJson: RunJson = {
    ...newRunJson({
      loaded: opts.loaded,
      runId: dir.runId,
      started,
      workload: `bisect ${good.slice(0, 12)}..${bisect.bad.slice(0, 12)}`,
      mechanism,
      env,
    }),
    bisect,
  };
  writeRunJson(dir, runJson);
  return executeBisection({ ...opts, dir, runJson, bisect, commits, replay: [] });
}

export interface BisectResumeOptions {
  runDir: string;
  progress: Progress;
  signal?: AbortSignal;
  onStep?: (e: StepEvent) => void;
  drawCharts?: boolean;
}

/** Continues a stopped or killed bisection: its journaled trials are replayed, not run again. */
export async function resumeBisection(opts: BisectResumeOptions): Promise<BisectDone> {
  const path = resolve(opts.runDir);
  const runJson = readRunJsonForResume(path);
  const bisect = runJson.bisect;
  if (!bisect)
    throw new ConfigError(
      `cannot resume ${path} as a bisection: its run.json has no "bisect" section; resume it with tunebench run --resume`,
    );
  const dir = openRunDir(path, runJson.run_id);
  const notes: string[] = [];
  const records = readJournalForResume(dir, notes);
  for (const note of notes) opts.progress.note(note);
  opts.progress.note(`resuming the bisection in ${path}: ${records.length} journaled trial(s) are replayed`);
  const commits = await commitsBetween(bisect.repo, bisect.good, bisect.bad);
  const { stopped: _s, result: _r, ...rest } = runJson;
  const draft: RunJson = {
    ...rest,
    status: 'running',
    resumes: [
      ...runJson.resumes,
      { at: new Date().toISOString(), host: fingerprint().host, replayed_trials: records.length, notes },
    ],
  };
  writeRunJson(dir, draft);
  const loaded = { experiment: experimentOfRun(runJson).experiment, source: runJson.experiment_file, text: '' };
  return executeBisection({ ...opts, loaded, dir, runJson: draft, bisect, commits, replay: records });
}

interface Execution {
  dir: RunDir;
  runJson: RunJson;
  bisect: BisectRun;
  commits: string[];
  replay: TrialRecord[];
  loaded: LoadedExperiment;
  progress: Progress;
  signal?: AbortSignal | undefined;
  onStep?: ((e: StepEvent) => void) | undefined;
  drawCharts?: boolean | undefined;
}

/** The resume command of a bisection's run directory. */
export function bisectResumeCommand(dir: string): string {
  return printedCommand(['tunebench', 'bisect', '--resume', dir]);
}

async function executeBisection(x: Execution): Promise<BisectDone> {
  const { dir, bisect, loaded } = x;
  const experiment = loaded.experiment;
  const trees = new CommitTrees({
    repo: bisect.repo,
    runDir: dir.path,
    build: bisect.build ?? undefined,
    buildTimeoutSeconds: bisect.build_timeout_seconds,
    workload: experiment.workload,
    seed: experiment.seed,
    experimentInRepo: bisect.experiment_in_repo,
  });
  const base = trees.workload(x.runJson.workload, {});
  const run = runContext(
    {
      experiment,
      workload: base,
      env: x.runJson.environment,
      progress: x.progress,
      replay: x.replay,
      signal: x.signal,
      // The experiment's executor: on SLURM each look's rounds are one job array, as a compare stage's are.
      dir,
    },
    dir.journal,
    dir.scratch,
  );
  const fixed = workloadParams(experiment.workload);
  const started = Date.now();
  try {
    const steps: StepEvent[] = [];
    const measure = commitMeasure({ x, run, base: fixed, trees, steps });
    const result = await runBisect(x.commits, measure, bisect.max_steps ? { maxSteps: bisect.max_steps } : {});
    dir.journal.verify('by the end of the bisection');
    const file = await describe(x, result, steps, trees);
    await writeBisectFiles({
      dir,
      runJson: x.runJson,
      file,
      records: run.trials.records,
      started,
      draw: x.drawCharts ?? true,
    });
    return { file, runDir: dir.path };
  } catch (error) {
    const stopped = x.signal?.aborted === true;
    const reason = stopped ? String((x.signal!.reason as Error | undefined)?.message ?? 'stopped') : String(error);
    writeRunJson(dir, {
      ...x.runJson,
      status: stopped ? 'stopped' : 'failed',
      stopped: {
        reason,
        stage: BISECT_STAGE,
        completed_trials: run.trials.records.length,
        stage_trials: run.trials.records.length,
        resume: bisectResumeCommand(dir.path),
      },
    });
    if (stopped)
      throw new StoppedError(
        `${reason}: ${run.trials.records.length} completed trial(s) are in ${dir.journal.path}; ` +
          `resume with: ${bisectResumeCommand(dir.path)}`,
        { cause: error },
      );
    throw error;
  } finally {
    run.trial.warm?.close();
    await trees.releaseAll();
    dir.lock.release();
  }
}

/** The experiment's fixed parameters, which every trial's config carries (as a run's would). */
function workloadParams(w: LoadedExperiment['experiment']['workload']): Record<string, string | number | boolean> {
  if (w.kind !== 'command' || !w.params) return {};
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(w.params)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

/**
 * The measure function of runBisect: builds the good commit and the tested one (a failed build is a
 * skipped step, the oracle not called), then measures through compareOracle with journaled trials.
 */
function commitMeasure(a: {
  x: Execution;
  run: RunContext;
  base: Readonly<Config>;
  trees: CommitTrees;
  steps: StepEvent[];
}): MeasureFn {
  const { x, run: runCtx, base, trees, steps } = a;
  const { bisect } = x;
  let current: number[] = [];
  let measuring: { purpose: 'check' | 'step'; attempt: number } = { purpose: 'step', attempt: 1 };
  const specOf = (config: Config, o: Parameters<ArmTrialFn>[1]): TrialSpec => {
    const commit = String(config[COMMIT_PARAMETER]);
    return {
      stage: BISECT_STAGE,
      role: {
        kind: o.role,
        round: o.round + 1,
        bisect: { ...measuring, commit: commit === bisect.good ? 'good' : 'tested' },
      },
      config: { ...base, ...config },
      measure: { warmupSteps: x.loaded.experiment.measure.warmup_steps, steps: x.loaded.experiment.measure.steps },
    };
  };
  const run: ArmTrialFn = async (config, o) => {
    const commit = String(config[COMMIT_PARAMETER]);
    if (!runCtx.trials.replayed()) await trees.ensureLive(commit);
    const record = await runJournaledTrialOf(runCtx, specOf(config, o));
    current.push(record.index);
    return commitTrialOf(record);
  };
  // The trials of a look, announced together (a SLURM array); their commits' worktrees exist before they are
  // submitted, since the array's tasks run them on other nodes. Replayed trials need neither.
  const plan: ArmPlanFn = async (trials) => {
    const fresh = trials.slice(Math.max(0, runCtx.trials.replayLength - runCtx.trials.records.length));
    for (const commit of new Set(fresh.map((t) => String(t.config[COMMIT_PARAMETER])))) await trees.ensureLive(commit);
    await runCtx.trials.plan(trials.map((t) => specOf(t.config, t.opts)));
  };
  const oracle = compareOracle({
    run,
    good: bisect.good,
    minRounds: bisect.min_rounds,
    maxRounds: bisect.max_rounds,
    checkMinRounds: bisect.check_min_rounds,
    extendedMaxRounds: bisect.extended_max_rounds,
    noiseBand: bisect.noise_band,
    plan,
  });
  const byCommit = new Map<string, number[]>();
  return async (commit, context) => {
    if (x.signal?.aborted) throw new StoppedError('stopped');
    measuring = { purpose: context.purpose, attempt: context.attempt };
    current = context.attempt === 2 ? [...(byCommit.get(commit) ?? [])] : [];
    let measured: Awaited<ReturnType<MeasureFn>> | null = null;
    try {
      for (const [side, sha] of [
        ['good', bisect.good],
        ['commit', commit],
      ] as const) {
        const b = trees.built(sha) ?? (await trees.prepare(sha));
        if (!b.ok)
          measured ??= { verdict: 'skipped', ratio: null, failure: { phase: 'build', side, detail: b.detail } };
      }
      measured ??= await oracle(commit, context);
    } finally {
      if (!(measured?.verdict === 'undecided' && context.attempt === 1)) await trees.release(commit);
    }
    byCommit.set(commit, current);
    const index = x.commits.indexOf(commit);
    const step: BisectStep = { ...measured, commit, index, purpose: context.purpose, attempt: context.attempt };
    const event = { n: steps.length + 1, step, commits: x.commits.length, trials: [...current] };
    steps.push(event);
    x.onStep?.(event);
    return measured;
  };
}

/** A bisection's trial, run and journaled, with its position shown on the terminal. */
function runJournaledTrialOf(run: RunContext, spec: TrialSpec): Promise<TrialRecord> {
  const n = run.trials.records.length + 1;
  return run.trials.run(spec, { n, ofAbout: n, show: [COMMIT_PARAMETER] });
}

/** bisect.json's content: the result with the commits' subjects and authors. */
async function describe(
  x: Execution,
  result: BisectResult,
  steps: readonly StepEvent[],
  trees: CommitTrees,
): Promise<BisectFile> {
  const repo = x.bisect.repo;
  const o = result.outcome;
  return {
    tunebench_bisect: 1,
    repo,
    good: await commitInfo(repo, x.bisect.good),
    bad: await commitInfo(repo, x.bisect.bad),
    commits: x.commits,
    result,
    step_trials: steps.map((s) => s.trials),
    builds: x.commits
      .concat([x.bisect.good])
      .map((c) => trees.built(c))
      .filter((b): b is BuildRecord => b !== null),
    culprit: o.kind === 'culprit' ? await commitInfo(repo, o.commit) : null,
    range: o.kind === 'range' ? await Promise.all(o.commits.map((c) => commitInfo(repo, c))) : null,
    run_dir: x.dir.path,
  };
}
