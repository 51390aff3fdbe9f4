// The bisection a failed gate calls for: the newest run before the regression began (good) and
// tonight's (bad), with the commits and repository their run.json files record, as the arguments of
// `tunebench bisect`; or, as a typed reason, why no command can be given.
import { experimentFileProblem } from '../experiment/load.js';
import type { RunEntry } from './index.js';
import { failingMetrics, seriesDecides, type ExperimentHistory } from './trend.js';
import { readRunJson, type RunJson } from '../experiment/run-file.js';

export interface BisectRunRef {
  run_id: string;
  dir: string;
  /** run.json's environment.git_commit (null: the run records none, or its run.json cannot be read now). */
  commit: string | null;
}

/** Why a failed gate gets no bisect command. */
export type NoBisect =
  /** No run before the regression to start from (the gate found no reference run or baseline). */
  | { kind: 'no-good-run' }
  | { kind: 'unreadable'; run: BisectRunRef; error: string }
  /** tunebench ran outside a git checkout. */
  | { kind: 'no-commit'; run: BisectRunRef }
  | { kind: 'same-commit'; commit: string }
  /**
   * Recorded by a tunebench that stored the commit but not its checkout's folder: `args` (no --repo)
   * run from inside the repository.
   */
  | { kind: 'no-repo'; run: BisectRunRef; args: string[] }
  | { kind: 'other-repo'; good_repo: string; bad_repo: string }
  /** bisect measures a command workload (the repository's own program). */
  | { kind: 'not-command'; workload: string }
  /** The experiment file bisect would load: gone, not a file, or not a .yaml/.yml/.json (a one-liner's). */
  | { kind: 'no-experiment-file'; file: string; problem: 'missing' | 'not-a-file' | 'not-an-experiment-file' };

export type BisectHint =
  | {
      available: true;
      good: BisectRunRef;
      bad: BisectRunRef;
      repo: string;
      experiment_file: string;
      /** The arguments of tunebench: `bisect --repo <repo> --good <sha> --bad <sha> <experiment file>`. */
      args: string[];
    }
  | { available: false; good: BisectRunRef | null; bad: BisectRunRef; why: NoBisect };

/**
 * The runs on either side of the regression that fails the gate: tonight's (bad), and the newest run
 * before the regression began (good): for the series gate, the newest reference night of the failing
 * metrics (the earliest of them when they differ: it is before the regression for every one); while
 * the gate warms up, the baseline the latest run was compared with.
 */
function regressionRuns(h: ExperimentHistory, runs: readonly RunEntry[]): { good: RunEntry | null; bad: RunEntry } {
  const g = h.gate!;
  const bad = runs.find((r) => r.dir === g.latest.dir)!;
  if (!seriesDecides(g)) return { good: runs.find((r) => r.dir === g.baseline?.dir) ?? null, bad };
  const series = runs.filter((r) => r.experiment === h.experiment && r.env_key === g.series!.env_key);
  const references = g
    .series!.metrics.filter((m) => m.failing)
    .map((m) => (m.test ?? m.alarm)?.reference_to ?? null)
    .map((id) => series.findIndex((r) => r.run_id === id))
    .filter((i) => i >= 0);
  return { good: references.length > 0 ? series[Math.min(...references)]! : null, bad };
}

function read(entry: RunEntry): { ref: BisectRunRef; run: RunJson | null; error: string | null } {
  try {
    const run = readRunJson(entry.dir, 'no bisect command can be given');
    return { ref: { run_id: entry.run_id, dir: entry.dir, commit: run.environment.git_commit }, run, error: null };
  } catch (error) {
    return { ref: { run_id: entry.run_id, dir: entry.dir, commit: null }, run: null, error: (error as Error).message };
  }
}

function bisectArgs(repo: string | null, good: string, bad: string, file: string): string[] {
  return ['bisect', ...(repo === null ? [] : ['--repo', repo]), '--good', good, '--bad', bad, file];
}

/**
 * The bisect command for an experiment whose latest run fails the regression gate (null when it does
 * not fail), or why there is none. Reads the two runs' run.json files.
 */
export function bisectHint(h: ExperimentHistory, runs: readonly RunEntry[]): BisectHint | null {
  if (failingMetrics(h.gate).length === 0) return null;
  const sides = regressionRuns(h, runs);
  const bad = read(sides.bad);
  const none = (good: BisectRunRef | null, why: NoBisect): BisectHint => ({
    available: false,
    good,
    bad: bad.ref,
    why,
  });
  if (!sides.good) return none(null, { kind: 'no-good-run' });
  const good = read(sides.good);
  for (const side of [good, bad])
    if (side.error !== null) return none(good.ref, { kind: 'unreadable', run: side.ref, error: side.error });
  for (const side of [good, bad])
    if (side.ref.commit === null) return none(good.ref, { kind: 'no-commit', run: side.ref });
  const [goodCommit, badCommit] = [good.ref.commit!, bad.ref.commit!];
  if (goodCommit === badCommit) return none(good.ref, { kind: 'same-commit', commit: goodCommit });
  const workload = (bad.run!.resolved['workload'] as { kind?: unknown } | undefined)?.kind;
  if (workload !== 'command') return none(good.ref, { kind: 'not-command', workload: String(workload) });
  const file = bad.run!.experiment_file;
  const problem = experimentFileProblem(file);
  if (problem !== null) return none(good.ref, { kind: 'no-experiment-file', file, problem });
  const [goodRepo, badRepo] = [good.run!.environment.git_root ?? null, bad.run!.environment.git_root ?? null];
  if (goodRepo === null || badRepo === null)
    return none(good.ref, {
      kind: 'no-repo',
      run: goodRepo === null ? good.ref : bad.ref,
      args: bisectArgs(null, goodCommit, badCommit, file),
    });
  if (goodRepo !== badRepo) return none(good.ref, { kind: 'other-repo', good_repo: goodRepo, bad_repo: badRepo });
  return {
    available: true,
    good: good.ref,
    bad: bad.ref,
    repo: badRepo,
    experiment_file: file,
    args: bisectArgs(badRepo, goodCommit, badCommit, file),
  };
}
