// The measurement of a night of the paired gate: tonight's commit and the reference's, each checked out in
// a worktree under a run directory of its own (<reports>/gate/<experiment>/<run-id>/) and built there
// (bisect's machinery: CommitTrees), then run in paired, alternating rounds at the reference night's chosen
// config until the sequential CI decides (search/nightly-gate.ts). Every trial is journaled as in any run;
// the user's checkout is never touched.
import { StoppedError } from '../errors.js';
import type { LoadedExperiment } from '../experiment/load.js';
import { measureNight, type NightMeasurement } from '../search/nightly-gate.js';
import type { ArmTrialFn } from '../search/sweep.js';
import { createRunDir } from '../store/run-dir.js';
import { fingerprint } from '../telemetry/fingerprint.js';
import type { Config } from '../domain/index.js';
import { commitTrialOf, CommitTrees, pathInRepo } from './bisect-commits.js';
import type { Progress } from '../executors/progress.js';
import { newRunJson, preflightLimit, runContext } from './run-experiment.js';
import { writeRunJson } from '../experiment/run-file.js';
import { BISECT_DEFAULTS } from './bisect.js';

/** The stage name of a gate night's trials in its journal. */
export const GATE_STAGE = 'gate';

export interface NightMeasureOptions {
  /** The repository both commits are in, and the experiment as tonight's run ran it. */
  repo: string;
  loaded: LoadedExperiment;
  reference: string;
  tonight: string;
  /** The reference night's chosen config: both builds run at it. */
  config: Config;
  threshold: number;
  maxRounds?: number;
  /** Run in each commit's worktree before its trials (sh -c); absent: no build. */
  build?: string;
  /** The folder the gate's run directory goes under (<reports>/gate). */
  outDir: string;
  progress: Progress;
  signal?: AbortSignal;
}

export interface NightMeasured {
  measurement: NightMeasurement;
  /** The gate's run directory: its journal holds every trial of the night. */
  runDir: string;
  /** A build that failed, on which side and why (the measurement is then `failed` and runs nothing). */
  build: { side: 'reference' | 'tonight'; detail: string } | null;
}

export async function measureNightInWorktrees(o: NightMeasureOptions): Promise<NightMeasured> {
  const { experiment, source } = o.loaded;
  const env = fingerprint(o.repo);
  const mechanism = preflightLimit(experiment, env);
  const dir = createRunDir(o.outDir, experiment.name);
  const started = Date.now();
  const runJson = newRunJson({
    loaded: o.loaded,
    runId: dir.runId,
    started,
    workload: `gate ${o.reference.slice(0, 12)} -> ${o.tonight.slice(0, 12)}`,
    mechanism,
    env,
  });
  writeRunJson(dir, runJson);
  const trees = new CommitTrees({
    repo: o.repo,
    runDir: dir.path,
    build: o.build,
    buildTimeoutSeconds: BISECT_DEFAULTS.buildTimeoutSeconds,
    workload: experiment.workload,
    seed: experiment.seed,
    experimentInRepo: pathInRepo(o.repo, source),
  });
  const run = runContext(
    {
      experiment,
      workload: trees.workload(runJson.workload, {}),
      env,
      progress: o.progress,
      replay: [],
      signal: o.signal,
      dir,
    },
    dir.journal,
    dir.scratch,
  );
  const finish = (status: 'finished' | 'failed' | 'stopped') =>
    writeRunJson(dir, { ...runJson, status, finished_at: new Date().toISOString() });
  try {
    for (const [side, sha] of [
      ['reference', o.reference],
      ['tonight', o.tonight],
    ] as const) {
      const b = await trees.prepare(sha);
      if (!b.ok) {
        finish('failed');
        const measurement: NightMeasurement = {
          verdict: 'failed',
          ratio: null,
          rounds: 0,
          trials: 0,
          failure: { side, detail: b.detail },
        };
        return { measurement, runDir: dir.path, build: { side, detail: b.detail } };
      }
    }
    const trial: ArmTrialFn = async (config, opts) => {
      if (o.signal?.aborted) throw new StoppedError('stopped');
      const n = run.trials.records.length + 1;
      const record = await run.trials.run(
        {
          stage: GATE_STAGE,
          role: { kind: opts.role, round: opts.round + 1 },
          config,
          measure: { warmupSteps: experiment.measure.warmup_steps, steps: experiment.measure.steps },
        },
        { n, ofAbout: n, show: ['commit'] },
      );
      return commitTrialOf(record);
    };
    const measurement = await measureNight(trial, {
      reference: o.reference,
      tonight: o.tonight,
      config: o.config,
      threshold: o.threshold,
      ...(o.maxRounds !== undefined ? { maxRounds: o.maxRounds } : {}),
    });
    dir.journal.verify('by the end of the night');
    finish('finished');
    return { measurement, runDir: dir.path, build: null };
  } catch (error) {
    finish(o.signal?.aborted ? 'stopped' : 'failed');
    throw error;
  } finally {
    run.trial.warm?.close();
    await trees.releaseAll();
    dir.lock.release();
  }
}
