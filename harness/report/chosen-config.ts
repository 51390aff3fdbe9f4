// Emits the chosen config as JSON (canonical), a shell .env file and YAML, all with the same values,
// and, for a command workload, the chosen values as the arguments of the user's own script (.args).
import { join } from 'node:path';
import { stringify } from 'yaml';
import { configEnv } from '../workloads/protocol/env.js';
import type { TrainingCommand, Workload } from '../workloads/workload.js';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic.js';
import { finiteInterval } from './format.js';
import { shellLine, shellQuote } from '../util/shell.js';
import type { Config, Evidence, Fingerprint, Recipe } from '../domain/index.js';
import { isCpuDevice } from '../domain/index.js';

export interface ChosenConfig {
  experiment: string;
  run_id: string;
  created_at: string;
  config: Config;
  evidence: Record<string, Evidence>;
  device: { host: string; cpu: string; gpu: string | null; memory_limit_bytes: number | null };
  /** On SLURM: the node (and device class, and job) where the max-batch stage ran inside one allocation. */
  placement?: { stage: string; host: string; device: string; slurm_job: string | null };
  /**
   * Runs the job with the chosen config: for a command workload the expanded command (interpreter
   * included) in its working directory with its environment; for the ONNX workload, which has no
   * program of the user's, the tuning run.
   */
  reproduce: { command: string[]; cwd?: string; env: Record<string, string>; note?: string };
  /** Runs the tuning again. */
  retune: { command: string[] };
  /** Command workloads: the chosen values as the script's arguments, as in chosen-config.args. */
  args?: string[];
  /** A bucketed max-batch stage: the batch per bucket value, for a bucketing sampler (also chosen-config.buckets.json). */
  buckets?: BucketMap;
  /** keep_effective_batch and the learning-rate rules (rules, not measurements). */
  recipe?: Recipe;
}

export interface BucketMap {
  /** The bucket parameter (seq_len) and the batch parameter (batch_size). */
  param: string;
  batch_param: string;
  /** Bucket value (as a string key) to batch. */
  map: Record<string, number>;
  rows: { value: number; batch: number | null; max: number | null; tokens: number | null; status: string }[];
  rule: string;
  stage: string;
}

export type ChosenConfigArgs = Parameters<typeof buildChosenConfig>[0];

export function buildChosenConfig(args: {
  experiment: string;
  runId: string;
  config: Config;
  evidence: Record<string, Evidence>;
  fingerprint: Fingerprint;
  memoryLimit: number | null;
  experimentPath: string;
  placement?: ChosenConfig['placement'];
  /** The run's workload: a command workload's own program is what `reproduce` runs. */
  workload?: Workload;
  buckets?: BucketMap;
  recipe?: Recipe;
}): ChosenConfig {
  const retune = { command: ['tunebench', 'run', args.experimentPath] };
  const training = trainingCommand(args.workload, args.config);
  const reproduce: ChosenConfig['reproduce'] =
    training === undefined
      ? { ...retune, env: configEnv(args.config) }
      : 'why' in training
        ? { ...retune, env: configEnv(args.config), note: `runs the tuning again: ${training.why}` }
        : { command: training.argv, cwd: training.cwd, env: training.env };
  return {
    experiment: args.experiment,
    run_id: args.runId,
    created_at: new Date().toISOString(),
    config: args.config,
    evidence: finiteEvidence(args.evidence),
    device: {
      host: args.placement?.host ?? args.fingerprint.host,
      cpu: args.fingerprint.cpu.model,
      gpu: args.placement
        ? isCpuDevice(args.placement.device)
          ? null
          : args.placement.device
        : (args.fingerprint.gpu?.name ?? null),
      memory_limit_bytes: args.memoryLimit,
    },
    ...(args.placement ? { placement: args.placement } : {}),
    reproduce,
    retune,
    ...(training && 'args' in training ? { args: training.args } : {}),
    ...(args.buckets ? { buckets: args.buckets } : {}),
    ...(args.recipe ? { recipe: args.recipe } : {}),
  };
}

/**
 * The workload's own program with `config`: undefined for a workload without one (ONNX), `why` when
 * the chosen config leaves a template without a value (a parameter only a claim's sides set).
 */
export function trainingCommand(
  workload: Workload | undefined,
  config: Config,
): TrainingCommand | { why: string } | undefined {
  if (!workload?.training) return undefined;
  try {
    return workload.training(config);
  } catch (error) {
    return { why: (error as Error).message };
  }
}

/** Evidence as a file may carry it: a CI with a non-finite bound is no CI (JSON would write null). */
function finiteEvidence(evidence: Record<string, Evidence>): Record<string, Evidence> {
  return Object.fromEntries(
    Object.entries(evidence).map(([k, e]) => {
      const out: Evidence = { ...e, samples_per_second: finiteInterval(e.samples_per_second) };
      if (out.point !== undefined && !Number.isFinite(out.point)) delete out.point;
      return [k, out];
    }),
  );
}

/** Whether writeChosenConfig writes chosen-config.args for this workload and config. */
export function argsWritten(workload: Workload, config: Config): boolean {
  const training = trainingCommand(workload, config);
  return training !== undefined && 'args' in training;
}

export function writeChosenConfig(dir: string, chosen: ChosenConfig): void {
  writeJsonAtomic(join(dir, 'chosen-config.json'), chosen);
  const env = [
    `# tunebench chosen config for ${chosen.experiment} (run ${chosen.run_id})`,
    ...Object.entries(configEnv(chosen.config)).map(([k, v]) => `${k}=${shellQuote(v)}`),
    '',
  ].join('\n');
  writeFileAtomic(join(dir, 'chosen-config.env'), env);
  writeFileAtomic(
    join(dir, 'chosen-config.yaml'),
    `# tunebench chosen config for ${chosen.experiment} ` +
      `(run ${chosen.run_id})\n${stringify({ config: chosen.config })}`,
  );
  // One line and nothing else, so that `eval "python train.py $(cat chosen-config.args)"` works.
  if (chosen.args) writeFileAtomic(join(dir, 'chosen-config.args'), `${shellLine(chosen.args)}\n`);
  // For a bucketing sampler: {"param": "seq_len", "batch_param": "batch_size", "batches": {"128": 512, ...}}.
  if (chosen.buckets)
    writeJsonAtomic(join(dir, 'chosen-config.buckets.json'), {
      param: chosen.buckets.param,
      batch_param: chosen.buckets.batch_param,
      batches: chosen.buckets.map,
      tokens: Object.fromEntries(chosen.buckets.rows.map((r) => [String(r.value), r.tokens])),
      rule: chosen.buckets.rule,
    });
}
