// Runs an experiment end to end: validate, create the run directory, run each stage, write the outputs.
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ConfigError, StoppedError } from '../errors.js';
import { stageName } from '../experiment/checks.js';
import { loadExperiment } from '../experiment/load.js';
import type { Experiment } from '../experiment/schema.js';
import { formatBytes } from '../experiment/units.js';
import { buildChosenConfig, writeChosenConfig } from '../report/chosen-config.js';
import { writeReports } from '../report/write.js';
import { createRunDir, writeRunJson } from '../store/run-dir.js';
import { fingerprint } from '../telemetry/fingerprint.js';
import { planLimit } from '../trial/limits.js';
import { OUTCOMES, type Config, type Outcome } from '../trial/record.js';
import { createWorkload } from '../workloads/index.js';
import type { Workload } from '../workloads/workload.js';
import type { Evidence, StageContext, StageOutcome } from './context.js';
import type { Progress } from './progress.js';
import type { RunResult } from './result.js';
import { runClaimStage } from './stages/claim.js';
import { runCompareStage } from './stages/compare.js';
import { runMaxBatchStage } from './stages/max-batch.js';
import { runSweepStage } from './stages/sweep.js';

export interface RunOptions {
  experimentPath: string;
  outDir: string;
  progress: Progress;
  signal?: AbortSignal;
  /** Changes the loaded experiment before it runs (e.g. `tunebench claims --max-pairs`). */
  adjust?: (experiment: Experiment) => void;
}

export async function runExperiment(opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const { experiment, source, text } = loadExperiment(opts.experimentPath);
  opts.adjust?.(experiment);
  const workload: Workload = createWorkload(experiment, source);
  let mechanism: string;
  try {
    mechanism = planLimit(experiment.limits.memory, experiment.limits.mechanism, 'preflight').mechanism;
  } catch (error) {
    throw new ConfigError(`limits: ${(error as Error).message}`, [], { cause: error });
  }
  const env = fingerprint();
  const dir = createRunDir(opts.outDir, experiment.name);
  const runJson = {
    tunebench_run: 1,
    experiment: experiment.name,
    run_id: dir.runId,
    started_at: new Date(started).toISOString(),
    experiment_file: source,
    experiment_text: text,
    resolved: experiment,
    workload: workload.description,
    limit: { mechanism, bytes: experiment.limits.memory ?? null, timeout_seconds: experiment.limits.timeout },
    environment: env,
  };
  writeRunJson(dir, runJson);

  const ctx: StageContext = {
    experiment,
    trial: { workload, limits: experiment.limits, scratchDir: dir.scratch, ...(opts.signal ? { signal: opts.signal } : {}) },
    journal: dir.journal,
    progress: opts.progress,
    records: [],
    baseConfig: { ...workload.fixedParams },
    environment: `${env.host} (${env.cpu.model}, ${env.cpu.cores} cores${env.gpu ? `, ${env.gpu.count} x ${env.gpu.name}` : ', no GPU'})`,
    hasCuda: env.gpu !== null,
  };
  const outcomes: StageOutcome[] = [];
  const evidence: Record<string, Evidence> = {};
  try {
    for (const [i, stage] of experiment.stages.entries()) {
      const name = stageName(stage, i);
      opts.progress.stage(name, `${stage.kind} on ${workload.description}`);
      const outcome =
        stage.kind === 'max-batch'
          ? await runMaxBatchStage(ctx, stage, name)
          : stage.kind === 'sweep'
            ? await runSweepStage(ctx, stage, name)
            : stage.kind === 'compare'
              ? await runCompareStage(ctx, stage, name)
              : await runClaimStage(ctx, stage, name);
      for (const note of outcome.notes) opts.progress.note(note);
      outcomes.push(outcome);
      Object.assign(ctx.baseConfig, outcome.chosen);
      Object.assign(evidence, outcome.evidence);
    }
  } catch (error) {
    if (opts.signal?.aborted) {
      throw new StoppedError(`stopped: ${ctx.records.length} completed trial(s) are in ${dir.journal.path}; the interrupted trial was not recorded`, { cause: error });
    }
    throw error;
  }

  const warnings: string[] = [];
  if (mechanism === 'none') warnings.push('no memory cap was enforced (limits.memory unset or mechanism "none")');
  for (const o of outcomes) {
    const r = o.result as { status?: string };
    if (r.status === 'none-fits' && mechanism === 'prlimit-as') {
      warnings.push(`stage ${o.name}: nothing fit under the ${formatBytes(experiment.limits.memory!)} address-space cap; Node.js and ONNX Runtime alone reserve about 1.2 GB of address space under prlimit --as, so raise limits.memory`);
    }
  }
  const failedStages = outcomes
    .filter((o) => {
      const r = o.result as { status?: string; configs?: { status: string }[] };
      return r.status === 'failed' || (o.kind === 'sweep' && Object.keys(o.chosen).length === 0 && (r.configs ?? []).some((c) => c.status === 'failed'));
    })
    .map((o) => o.name);
  const chosen: Config = { ...ctx.baseConfig };
  const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of ctx.records) byOutcome[r.outcome] += 1;
  const files = {
    run: join(dir.path, 'run.json'),
    journal: dir.journal.path,
    chosen_config: join(dir.path, 'chosen-config.json'),
    chosen_env: join(dir.path, 'chosen-config.env'),
    chosen_yaml: join(dir.path, 'chosen-config.yaml'),
    summary: join(dir.path, 'summary.md'),
    report: join(dir.path, 'report.html'),
  };
  const result: RunResult = {
    experiment: experiment.name,
    run_id: dir.runId,
    run_dir: dir.path,
    environment: `${env.host} (${env.cpu.model}, ${env.cpu.cores} cores), cap ${experiment.limits.memory ? formatBytes(experiment.limits.memory) : 'none'} via ${mechanism}`,
    chosen,
    evidence,
    stages: outcomes,
    trials: { total: ctx.records.length, by_outcome: byOutcome },
    wall_seconds: (Date.now() - started) / 1000,
    warnings,
    failed_stages: failedStages,
    files,
  };
  writeChosenConfig(
    dir.path,
    buildChosenConfig({
      experiment: experiment.name,
      runId: dir.runId,
      config: chosen,
      evidence,
      fingerprint: env,
      memoryLimit: experiment.limits.memory ?? null,
      experimentPath: relative(process.cwd(), source) || source,
    }),
  );
  const finished = { ...runJson, finished_at: new Date().toISOString(), result };
  writeRunJson(dir, finished);
  await writeReports(dir.path, finished, ctx.records);
  rmSync(dir.scratch, { recursive: true, force: true });
  return result;
}
