// `tunebench run --resume <run-dir>`: continues a stopped or killed run. The run directory is locked,
// run.json and the journal are checked (each damage gets its own message), a last line cut short by
// a kill is dropped, and the stages replay the journal: completed trials are never run again.
import { existsSync, readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { environmentDiffs } from '../analysis/compare-runs.js';
import { JOURNAL_FILE, readJournal, requireJournalFormat } from '../store/journal.js';
import { experimentDirName, openRunDir, RUN_FILE, RunFormatError, type RunDir } from '../store/run-dir.js';
import { fingerprint } from '../telemetry/fingerprint.js';
import { worktreeWorkload } from './bisect-commits.js';
import { createWorkload } from '../workloads/index.js';
import type { Experiment } from '../experiment/schema.js';
import type { Workload } from '../workloads/workload.js';
import type { Progress } from '../executors/progress.js';
import { execute, preflightLimit } from './run-experiment.js';
import { isFinished, READABLE_RUN_VERSIONS, versionList, type TrialRecord } from '../domain/index.js';
import { readRunJson, writeRunJson, type RunJson, type RunResult } from '../experiment/run-file.js';
import { parseExperimentText } from './load.js';

export interface ResumeOptions {
  runDir: string;
  progress: Progress;
  signal?: AbortSignal;
  /** SLURM: submit what is next and return instead of waiting. */
  noWait?: boolean;
}

/**
 * The newest run of an experiment under outDir that did not finish (killed, stopped, failed), for
 * `tunebench run --resume-unfinished`: nightly jobs continue last night's run instead of starting over.
 * Only runs of the same experiment count: the same name and the same experiment file (two files may
 * share a name, or names that map to one folder).
 */
export function findUnfinished(outDir: string, experiment: { name: string; file: string }): string | null {
  const root = join(resolve(outDir), experimentDirName(experiment.name));
  if (!existsSync(root)) return null;
  const file = resolve(experiment.file);
  const mine = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, RUN_FILE)))
    .map((d) => ({ dir: join(root, d.name), run: runJsonOrNull(join(root, d.name)) }))
    .filter(({ run }) => run === null || (run.experiment === experiment.name && resolve(run.experiment_file) === file))
    .sort((a, b) => a.dir.localeCompare(b.dir));
  // Only the newest run: an older run left unfinished was given up, and must not come back every night.
  const newest = mine.at(-1);
  // A damaged run.json cannot be resumed: a new run starts.
  return newest?.run && !isFinished(newest.run) ? newest.dir : null;
}

function runJsonOrNull(dir: string): RunJson | null {
  try {
    return readRunJson(dir, '');
  } catch {
    return null;
  }
}

/** The experiment a run directory ran, as resolved when it started, and its workload. */
export function experimentOfRun(run: RunJson, runDir?: string): { experiment: Experiment; workload: Workload } {
  const experiment = parseExperimentText(JSON.stringify(run.resolved), run.experiment_file, 'json');
  // A bisection's trial runs in the worktree of its commit, which the coordinator made under the run directory.
  if (run.bisect && runDir !== undefined)
    return {
      experiment,
      workload: worktreeWorkload(
        {
          runDir,
          workload: experiment.workload,
          seed: experiment.seed,
          experimentInRepo: run.bisect.experiment_in_repo,
        },
        run.workload,
        {},
      ),
    };
  return { experiment, workload: createWorkload(experiment.workload, experiment.seed, run.experiment_file) };
}

export async function resumeExperiment(opts: ResumeOptions): Promise<RunResult> {
  const path = resolve(opts.runDir);
  if (!existsSync(join(path, RUN_FILE))) {
    throw new ConfigError(
      `cannot resume ${opts.runDir}: it is not a run directory (${RUN_FILE} is missing); ` +
        'pass the "run directory" that tunebench printed, e.g. reports/<experiment>/<run-id>',
    );
  }
  const dir = openRunDir(path, '');
  try {
    const runJson = readRunJsonForResume(path);
    const resumed: RunDir = { ...dir, runId: runJson.run_id };
    const notes: string[] = [];
    if (dir.lock.tookOver) notes.push(dir.lock.tookOver);
    requireJournalOfProgress(runJson, resumed);
    const records = readJournalForResume(resumed, notes);
    const { experiment, workload } = experimentOfRun(runJson);
    const env = fingerprint(process.cwd(), workload.python);
    const mechanism = preflightLimit(experiment, env);
    // Another host of the same cluster is the same environment; anything else is noted.
    const moved = environmentDiffs(runJson.environment, env)
      .filter((d) => d.field !== 'host')
      .map((d) => d.text);
    if (moved.length > 0) notes.push(`resumed in another environment than the run started in: ${moved.join('; ')}`);
    for (const note of notes) opts.progress.note(note);
    opts.progress.note(
      `resuming ${path}: ${records.length} completed trial(s) are replayed from the journal and not run again`,
    );
    const { stopped: _stopped, result: _result, ...rest } = runJson;
    const draft: RunJson = {
      ...rest,
      status: 'running',
      resumes: [
        ...(runJson.resumes ?? []),
        { at: new Date().toISOString(), host: hostname(), replayed_trials: records.length, notes },
      ],
    };
    writeRunJson(resumed, draft);
    return await execute({
      dir: resumed,
      runJson: draft,
      experiment,
      workload,
      mechanism,
      env,
      started: Date.now(),
      replay: records,
      progress: opts.progress,
      signal: opts.signal,
      noWait: opts.noWait ?? false,
    });
  } finally {
    dir.lock.release();
  }
}

export function readRunJsonForResume(dir: string): RunJson {
  const runPath = join(dir, RUN_FILE);
  let run: RunJson;
  try {
    run = readRunJson(
      dir,
      `the completed trials in ${JOURNAL_FILE} are intact, ` +
        'but the experiment to resume is lost: start a new run from the experiment file',
    );
  } catch (error) {
    if (error instanceof RunFormatError) {
      throw new ConfigError(
        `cannot resume: ${runPath} has run format ${JSON.stringify(error.version ?? null)}, and this tunebench ` +
          `resumes formats ${versionList(READABLE_RUN_VERSIONS)}; resume it with the tunebench version that started ` +
          'it, or start a new run',
        [],
        { cause: error },
      );
    }
    throw new ConfigError(`cannot resume: ${(error as Error).message}`, [], { cause: error });
  }
  if (isFinished(run)) {
    throw new ConfigError(
      `nothing to resume: the run in ${runPath} finished at ${run.finished_at ?? 'an earlier time'}; ` +
        `its report is ${join(runPath, '..', 'report.html')}`,
    );
  }
  return run;
}

/**
 * What the run directory says had run before it stopped: trials counted in run.json (a stop, earlier
 * resumes, a partial result) and trial files left in .scratch/.
 */
function progressOf(run: RunJson, dir: RunDir): { trials: number; where: string } | null {
  const counted = Math.max(
    run.stopped?.completed_trials ?? 0,
    ...(run.resumes ?? []).map((r) => r.replayed_trials),
    run.result?.trials.total ?? 0,
  );
  if (counted > 0) return { trials: counted, where: `${RUN_FILE} records ${counted} completed trial(s)` };
  let files: string[] = [];
  try {
    files = readdirSync(dir.scratch).filter((f) => f.endsWith('.events.jsonl') || f.endsWith('.stderr'));
  } catch {
    // No scratch folder: nothing ran.
  }
  // A trial's files are removed when it is journaled, so what is left belongs to the trial a kill
  // interrupted: trial N > 0 starts only after trial N-1 is in the journal. Trial 0's files alone
  // mean the journal was never written (the kill landed in the first trial).
  const started = Math.max(-1, ...files.map((f) => Number(/^t(\d+)[.-]/.exec(f)?.[1] ?? -1)));
  return started > 0
    ? {
        trials: started,
        where: `.scratch/ holds the files of trial ${started}, which starts after ${started} were journaled`,
      }
    : null;
}

/**
 * A journal that is missing although trials ran was deleted: resuming would run every trial again and
 * present it as the same run, so it is refused with the way out.
 */
function requireJournalOfProgress(run: RunJson, dir: RunDir): void {
  if (existsSync(dir.journal.path)) return;
  const progress = progressOf(run, dir);
  if (!progress) return;
  throw new ConfigError(
    `cannot resume ${dir.path}: its journal ${dir.journal.path} is missing, but ${progress.where}, ` +
      'so the journal was deleted or moved after the run stopped; restore the journal (from a backup, or ' +
      `put it back where it was) and resume again, or start a new run from ${run.experiment_file}`,
  );
}

export function readJournalForResume(dir: RunDir, notes: string[]): TrialRecord[] {
  const journal = readJournal(dir.journal.path);
  requireJournalFormat(
    journal,
    dir.journal.path,
    'cannot resume: ',
    'resume it with the tunebench version that wrote it, or start a new run',
  );
  if (journal.badLines.length > 0) {
    throw new ConfigError(
      `cannot resume: ${dir.journal.path} lines ${journal.badLines.join(', ')} are not trial records ` +
        `(${journal.problems[0] ?? 'not valid JSON'}): the journal was edited or damaged; start a new run`,
    );
  }
  const misplaced = journal.records.findIndex((r, i) => r.index !== i);
  if (misplaced >= 0) {
    throw new ConfigError(
      `cannot resume: ${dir.journal.path} line ${misplaced + 1} holds trial ${journal.records[misplaced]!.index}, ` +
        `expected trial ${misplaced}: trials were lost or duplicated outside tunebench; start a new run`,
    );
  }
  if (journal.truncatedTail) {
    dir.journal.rewrite(journal);
    notes.push(
      `the last line of ${JOURNAL_FILE} was cut short (tunebench was killed while writing it); ` +
        'it was dropped and that trial runs again',
    );
  }
  return journal.records;
}
