// `tunebench gate`: the nightly gate, paired. Tonight's run (the newest finished run of the experiment) is
// judged against the reference build, not against last night's figures: both commits run tonight in paired
// rounds at the reference night's chosen config (engine/night-measure.ts), so a noisy night slows both and
// a machine that drifts moves both. A regression is what that paired CI shows beyond the threshold; the
// series across nights (`tunebench history`) stays a report and a second opinion. Each judged night goes
// into the ledger (nights.json) before the exit code is returned.
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { acquireLock } from '../store/lock.js';
import type { Progress } from '../executors/progress.js';
import { measureNightInWorktrees } from '../engine/night-measure.js';
import { experimentOfRun } from '../engine/resume.js';
import { readRunJson } from '../experiment/run-file.js';
import type { NightMeasurement } from '../search/nightly-gate.js';
import { readAccepted, readBaseline } from './files.js';
import { HISTORY_LOCK_FILE, indexRuns, type RunEntry } from './index.js';
import { readNights, referenceOf, writeNights, type Night } from './nights.js';

/** The folder under the reports folder where the gate's run directories go. */
export const GATE_DIR = 'gate';

export interface GateOptions {
  reportsDir: string;
  experiment: string;
  /** A slowdown beyond this fraction of the reference's throughput fails the night (0.05: 5%). */
  threshold: number;
  /** The repository of both commits; default: the checkout tonight's run was made in (run.json's git_root). */
  repo?: string;
  /** Run with sh -c in each commit's worktree before its trials. */
  build?: string;
  maxRounds?: number;
  /** The command line, for the lock file. */
  commandLine: string;
  progress: Progress;
  signal?: AbortSignal;
}

export interface GateOutcome {
  night: Night;
  /** Whether tonight was judged before (the ledger already held it): nothing was measured again. */
  again: boolean;
}

export async function runGate(o: GateOptions): Promise<GateOutcome> {
  const reports = resolve(o.reportsDir);
  const lock = acquireLock(reports, o.commandLine, { file: HISTORY_LOCK_FILE, then: 'run tunebench gate again' });
  try {
    return await judge(o, reports);
  } finally {
    lock.release();
  }
}

async function judge(o: GateOptions, reports: string): Promise<GateOutcome> {
  const index = await indexRuns(reports);
  const runs = index.runs.filter((r) => r.experiment === o.experiment);
  const tonight = runs.at(-1);
  if (!tonight)
    throw new ConfigError(
      `no finished run of experiment "${o.experiment}" in ${o.reportsDir}: ` +
        'the gate judges the newest run; run the experiment first (tunebench run <experiment> --out <reports>)',
    );
  const expDir = join(reports, o.experiment);
  const nights = readNights(expDir);
  const known = nights.find((n) => n.run_id === tonight.run_id);
  if (known) return { night: known, again: true };
  const reference = referenceOf(runs, tonight, nights, readBaseline(expDir), readAccepted(expDir));
  const night = await judgeNight(tonight, reference, o.threshold, (ref, now) =>
    measureInWorktrees(o, reports, ref, now),
  );
  writeNights(expDir, [...nights, night]);
  return { night, again: false };
}

/** What measuring a night gave: the paired verdict, the gate's run directory, and a regression's bisection. */
export interface NightMeasured {
  measurement: NightMeasurement;
  gateDir: string | null;
  bisect: string[] | null;
}

/** Measures tonight's commit against the reference's (both known to differ and to be recorded). */
export type MeasureNightFn = (
  reference: RunEntry & { git_commit: string },
  tonight: RunEntry & { git_commit: string },
) => Promise<NightMeasured>;

/**
 * Tonight's record against its reference: the first night of the ledger without one, a night of the
 * reference's own commit without measuring, else the paired measurement's verdict. The bench drives it with
 * simulated measurements (test/bench/nightly.bench.ts); the gate with worktrees.
 */
export async function judgeNight(
  tonight: RunEntry,
  reference: RunEntry | null,
  threshold: number,
  measure: MeasureNightFn,
): Promise<Night> {
  const base = {
    run_id: tonight.run_id,
    dir: tonight.dir,
    commit: tonight.git_commit,
    started_at: tonight.started_at,
    reference: reference ? { run_id: reference.run_id, commit: reference.git_commit } : null,
    threshold,
    judged_at: new Date().toISOString(),
  };
  const none = { ratio: null, rounds: 0, trials: 0, gate_dir: null, failure: null, bisect: null };
  if (!reference) return { ...base, ...none, verdict: 'first' };
  if (tonight.git_commit === null || reference.git_commit === null)
    throw new ConfigError(
      `the gate measures tonight's commit against the reference's, but ${
        tonight.git_commit === null ? `tonight's run ${tonight.run_id}` : `the reference ${reference.run_id}`
      } records no git commit: run tunebench from inside the repository of the code under test (nightly.sh does)`,
    );
  if (tonight.git_commit === reference.git_commit) return { ...base, ...none, verdict: 'same-commit' };
  const measured = await measure(
    { ...reference, git_commit: reference.git_commit },
    { ...tonight, git_commit: tonight.git_commit },
  );
  const m = measured.measurement;
  const verdict = verdictWord(m);
  return {
    ...base,
    verdict,
    bisect: verdict === 'flagged' ? measured.bisect : null,
    ratio: m.ratio ? { estimate: m.ratio.estimate, low: m.ratio.low, high: m.ratio.high } : null,
    rounds: m.rounds,
    trials: m.trials,
    gate_dir: measured.gateDir,
    failure: m.failure,
  };
}

/** The paired measurement in worktrees of the repository tonight's run was made in. */
async function measureInWorktrees(
  o: GateOptions,
  reports: string,
  reference: RunEntry & { git_commit: string },
  tonight: RunEntry & { git_commit: string },
): Promise<NightMeasured> {
  const run = readRunJson(tonight.dir, 'the gate cannot know what tonight ran');
  const repo = o.repo ?? run.environment.git_root ?? null;
  if (repo === null)
    throw new ConfigError(
      `tonight's run ${tonight.run_id} does not record the checkout it ran in (git_root): pass --repo <dir>`,
    );
  const measured = await measureNightInWorktrees({
    repo,
    loaded: { experiment: experimentOfRun(run).experiment, source: run.experiment_file, text: run.experiment_text },
    reference: reference.git_commit,
    tonight: tonight.git_commit,
    config: reference.chosen,
    threshold: o.threshold,
    ...(o.maxRounds !== undefined ? { maxRounds: o.maxRounds } : {}),
    ...(o.build !== undefined ? { build: o.build } : {}),
    outDir: join(reports, GATE_DIR),
    progress: o.progress,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  return {
    measurement: measured.measurement,
    gateDir: measured.runDir,
    bisect: [
      'bisect',
      '--repo',
      repo,
      '--good',
      reference.git_commit,
      '--bad',
      tonight.git_commit,
      run.experiment_file,
    ],
  };
}

function verdictWord(m: NightMeasurement): Night['verdict'] {
  switch (m.verdict) {
    case 'regression':
      return 'flagged';
    case 'no-regression':
      return 'accepted';
    case 'undecided':
      return 'undecided';
    case 'failed':
      return 'failed';
  }
}
