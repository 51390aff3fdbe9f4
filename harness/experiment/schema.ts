// The experiment file's schema: the one source of truth for validation, types and the exported JSON Schema.
import { ARENA_POLICIES, EXECUTION_PROVIDERS, MODEL_KINDS } from '../workloads/onnx/spec.js';
import { envNameProblem, paramNameProblem } from './names.js';
import { optional, required, s, type Infer, type Schema } from './schema-kit.js';
import { DURATION_PATTERN, parseDuration, parseSize, SIZE_PATTERN } from './units.js';

const size = (description: string) =>
  s.unit('a size such as "2GiB", "800MB" or a number of bytes', SIZE_PATTERN, parseSize, description);
/** A duration; `max` (seconds) keeps it far below the 2^31-1 ms (24.8 days) past which a Node.js timer fires after 1 ms. */
const duration = (description: string, max?: { seconds: number; why: string }) =>
  s.unit('a duration such as "90s", "2m", "50ms" or a number of seconds', DURATION_PATTERN, parseDuration, description, max && { max: max.seconds, format: formatDuration, why: max.why });
export const MAX_TRIAL_TIMEOUT_SECONDS = 7 * 86400;
export const MAX_POLL_SECONDS = 3600;

function formatDuration(seconds: number): string {
  const days = seconds / 86400;
  const hours = seconds / 3600;
  return `${seconds} s${days >= 1 ? ` (${+days.toFixed(2)} day${days === 1 ? '' : 's'})` : hours >= 1 ? ` (${+hours.toFixed(2)} hour${hours === 1 ? '' : 's'})` : ''}`;
}
const positiveInt = (description?: string) => s.number({ integer: true, min: 1, ...(description ? { description } : {}) });
const nonNegativeInt = (description?: string) => s.number({ integer: true, min: 0, ...(description ? { description } : {}) });
const fraction = (description: string) => s.number({ min: 0, max: 0.95, description });

/** A parameter value: numbers, strings and booleans, as in PyTorch's and ONNX Runtime's own names. */
const paramValue = s.either(s.either(s.number(), s.string()), s.boolean());
/** An object keyed by parameter names; names that clash with JavaScript or the protocol are refused. */
const paramRecord = <T>(value: Schema<T>, description: string) => s.record(value, description, { noun: 'parameter', checkKey: paramNameProblem });
const paramName = (hint: string) => s.string({ pattern: /^[a-z][a-z0-9_]*$/, hint, check: paramNameProblem });

const generatedModel = s.object(
  {
    generate: required(s.literal(MODEL_KINDS, 'which generated model to build')),
    seed: optional(nonNegativeInt('seed for the weights'), 1),
    input: optional(positiveInt('mlp: input features')),
    hidden: optional(positiveInt('mlp: hidden width')),
    layers: optional(positiveInt('mlp: hidden layers')),
    output: optional(positiveInt('mlp: output features')),
    channels: optional(positiveInt('conv: input channels')),
    size: optional(positiveInt('conv: input height and width')),
    width: optional(positiveInt('conv: channels of the first block')),
    blocks: optional(positiveInt('conv: conv blocks')),
    classes: optional(positiveInt('conv: output classes')),
    seq: optional(positiveInt('transformer: sequence length')),
    dim: optional(positiveInt('transformer: model width')),
    heads: optional(positiveInt('transformer: attention heads')),
    ffn: optional(positiveInt('transformer: feed-forward width')),
  },
  'A model that tunebench generates itself (deterministic, cached by its parameters).',
);

const dim = s.either(positiveInt(), s.string({ pattern: /^[A-Za-z_][A-Za-z0-9_]*$/, hint: 'a symbolic dimension name such as "batch"' }));
const fileModel = s.object(
  {
    path: required(s.string({ description: 'path to an .onnx file, relative to the experiment file' })),
    inputs: required(s.record(s.array(dim, { minItems: 1 }), 'input name to shape; a symbolic dimension is the batch size', { noun: 'input' })),
  },
  'Your own ONNX model; give each float32 input its shape with a symbolic batch dimension.',
);

const onnxParams = s.object({
  batch_size: optional(positiveInt('samples per step')),
  num_workers: optional(nonNegativeInt('data-loader worker threads; 0 preprocesses inline (needs workload.pipeline)')),
  prefetch_factor: optional(positiveInt('batches each worker keeps in flight')),
  persistent_workers: optional(s.boolean('keep the worker pool alive between epochs')),
  intra_op_threads: optional(nonNegativeInt('ONNX Runtime intra-op threads; 0 lets ONNX Runtime choose')),
  inter_op_threads: optional(nonNegativeInt('ONNX Runtime inter-op threads; 0 lets ONNX Runtime choose')),
  arena: optional(s.literal(ARENA_POLICIES, 'CPU memory arena: keep, shrink after every run, or off')),
  execution_provider: optional(s.literal(EXECUTION_PROVIDERS, 'ONNX Runtime execution provider')),
});

const pipeline = s.object(
  {
    cost: required(nonNegativeInt('augmentation passes per sample: the CPU cost of preprocessing')),
    epochs: optional(positiveInt('short epochs per trial; non-persistent workers restart at each'), 2),
    fault: optional(
      s.object({
        kind: required(s.literal(['throw', 'hang'] as const)),
        batch: required(nonNegativeInt('batch number at which the fault fires')),
      }, 'fault injection for testing the harness'),
    ),
  },
  'A synthetic data pipeline that feeds the first model input: decoding and augmenting samples on worker threads.',
);

const onnxWorkload = s.object(
  {
    kind: required(s.literal(['onnx'] as const)),
    model: required(s.either(generatedModel, fileModel)),
    params: optional(onnxParams, {}),
    pipeline: optional(pipeline),
  },
  'ONNX Runtime in a fresh Node.js child per trial (the embedded default; no Python, no GPU needed).',
);

const commandWorkload = s.object(
  {
    kind: required(s.literal(['command'] as const)),
    command: required(s.array(s.string(), { minItems: 1, description: 'program and arguments; "{name}" in an argument becomes that parameter\'s value, "{name:-2}" with a default, "{name?}" leaves the argument out without a value, "{name?--flag}" is --flag when the value is true' })),
    python: optional(s.string({ description: 'interpreter for "{python}" and for a command that starts with a .py script, e.g. /usr/bin/python3' })),
    cwd: optional(s.string({ description: 'working directory, relative to the experiment file' })),
    env: optional(s.record(s.string(), 'extra environment variables', { noun: 'variable', checkKey: envNameProblem })),
    params: optional(paramRecord(paramValue, 'fixed parameter values'), {}),
    protocol: optional(s.literal(['optional', 'required'] as const, 'required: a run without step events is invalid; optional: whole-process timing'), 'optional'),
  },
  'Any program, run as an argument array (never through a shell), configured through the workload protocol.',
);

const limits = s.object({
  memory: optional(size('hard memory cap for each trial')),
  mechanism: optional(s.literal(['auto', 'prlimit', 'cgroup', 'none'] as const, 'how the cap is enforced; auto picks cgroup v2 where writable, else prlimit'), 'auto'),
  timeout: optional(duration('wall-clock limit for one trial; the whole process tree is killed after it', { seconds: MAX_TRIAL_TIMEOUT_SECONDS, why: 'a trial that runs longer is stuck, and Node.js cannot time waits beyond 24.8 days; lower limits.timeout' }), 300),
});

const measure = s.object({
  warmup_steps: optional(nonNegativeInt('untimed steps before measuring'), 2),
  steps: optional(positiveInt('timed steps per trial'), 10),
});

const objective = s.object({
  maximize: optional(s.literal(['samples_per_second'] as const), 'samples_per_second'),
  constraints: optional(
    s.object({
      p95_step_latency: optional(duration('largest allowed 95th-percentile step latency')),
      p50_step_latency: optional(duration('largest allowed median step latency')),
    }),
    {},
  ),
});

const maxBatchStage = s.object(
  {
    kind: required(s.literal(['max-batch'] as const)),
    name: optional(s.string()),
    param: optional(paramName('a parameter name such as "batch_size"'), 'batch_size'),
    multiple_of: optional(positiveInt('granularity of the answer'), 8),
    start: optional(positiveInt('first probe; defaults to multiple_of')),
    ceiling: optional(positiveInt('largest batch the search may probe'), 1 << 20),
    steps: optional(positiveInt('full steps a probe must survive'), 3),
    confirm_steps: optional(nonNegativeInt('steps of the confirmation run at the max, and of the final confirmation with the final config; 0 skips both'), 50),
    confirm_epochs: optional(positiveInt('epochs the confirmation runs span (2: one epoch boundary, where a DataLoader starts its workers again)'), 2),
    final_confirm: optional(s.literal(['auto', 'off'] as const, 'auto: when later stages change other parameters, the chosen batch runs a confirmation with the final config before it is written'), 'auto'),
    headroom: optional(fraction('memory fraction kept free by the recommended batch'), 0.1),
    tolerance: optional(fraction('fastest: smallest batch within this fraction of peak samples/s'), 0.05),
    throughput_points: optional(nonNegativeInt('extra batch sizes measured for the throughput curve'), 4),
    choose: optional(s.literal(['recommended', 'max', 'fastest'] as const, 'the batch later stages use: recommended (keeps the headroom), max, or fastest (smallest within tolerance of the peak samples/s)'), 'recommended'),
  },
  'Finds the largest batch that runs without OOM under the cap, plus recommended and fastest.',
);

const budget = s.object({
  trials: optional(positiveInt('stop after this many trials')),
  seconds: optional(duration('stop after this much trial time')),
});

const paramSpace = s.either(
  s.array(paramValue, { minItems: 1, description: 'the values to try' }),
  s.either(
    s.object({ range: required(s.array(s.number(), { minItems: 2 })), step: optional(s.number({ exclusiveMin: 0 })) }, 'numbers from range[0] to range[1] by step (default 1)'),
    s.object({ pow2: required(s.array(s.number({ exclusiveMin: 0 }), { minItems: 2 })) }, 'powers of two from pow2[0] to pow2[1]'),
  ),
);

const expression = s.either(s.number(), s.string({ pattern: /^[-+*/() .0-9A-Za-z_]+$/, hint: 'an arithmetic expression of parameter names, such as "num_workers + intra_op_threads"' }));

const sweepStage = s.object(
  {
    kind: required(s.literal(['sweep'] as const)),
    name: optional(s.string()),
    params: required(paramRecord(paramSpace, 'parameter name to the values to sweep')),
    strategy: optional(s.literal(['race', 'grid'] as const, 'grid runs everything; race drops configs that a round-blocked test finds slower'), 'race'),
    repeats: optional(positiveInt('grid: trials per config (default 3); race: the most rounds (default 8)')),
    min_rounds: optional(s.number({ integer: true, min: 3, description: 'race: full rounds before the first elimination (at least 3)' }), 3),
    noise_band: optional(s.number({ min: 0, max: 0.5, description: 'race: stop when every config left is within this fraction of the leader' }), 0.02),
    steps: optional(positiveInt('timed steps per trial (default measure.steps)')),
    budget: optional(budget, {}),
    constraints: optional(
      s.object({
        cpus: optional(
          s.object(
            {
              uses: required(expression),
              max: required(expression),
              main: optional(nonNegativeInt('CPUs of the main process (the model or training loop), counted on top of uses; default 1, or 0 when uses names intra_op_threads')),
            },
            'prune configs where uses + main exceeds max; "cpus" in max is SLURM_CPUS_PER_TASK or the cores available',
          ),
        ),
        memory: optional(s.object({ uses: required(expression), max: required(size('memory budget')) }, 'prune configs whose estimated bytes exceed max')),
      }),
      {},
    ),
    cost: optional(s.array(s.string(), { description: 'parameters in order of cost, for choosing among ties (default: the order of params)' })),
    applies_when: optional(
      paramRecord(s.string(), 'conditional parameters: {prefetch_factor: num_workers} sweeps prefetch_factor only where num_workers is non-zero; elsewhere it is left out and duplicate configs run once'),
      {},
    ),
  },
  'Sweeps parameters over a grid (lists, ranges, powers of two); ranks configs by a bootstrap CI of throughput.',
);

const compareStage = s.object(
  {
    kind: required(s.literal(['compare'] as const)),
    name: optional(s.string()),
    param: required(paramName('a parameter name such as "empty_cache" or "arena"')),
    arms: required(s.array(paramValue, { minItems: 2, description: 'the values compared, each an arm; the other parameters stay fixed' })),
    baseline: optional(paramValue),
    repeats: optional(positiveInt('rounds before the first decision; each round runs every undecided arm and the baseline, in an order that reverses every round'), 5),
    max_rounds: optional(positiveInt('the most rounds: rounds are added until every arm is decided (faster, slower or within the noise band)'), 20),
    steps: optional(positiveInt('timed steps per trial (default measure.steps)')),
    budget: optional(budget, {}),
    noise_band: optional(s.number({ min: 0, max: 0.5, description: 'a ratio CI must lie entirely outside 1 +/- this band to count as a change, and inside it to count as no difference' }), 0.02),
  },
  'Compares values of one parameter in interleaved rounds: each arm against the baseline as per-round pairs, with sequential 95% CIs of the throughput and peak-memory ratios.',
);

const claimStage = s.object(
  {
    kind: required(s.literal(['claim'] as const)),
    name: optional(s.string()),
    claim: required(s.string({ description: 'the claimed effect as people write it: "2-3x", ">=1.3x", "8x", "5-10% faster", "40-50% less time", "30% less memory"' })),
    source: optional(s.string({ description: 'where the claim comes from, for the report' })),
    metric: optional(s.literal(['throughput', 'step_time', 'process_time', 'peak_memory'] as const, 'what is measured: samples/s, time per step, whole-process wall time, or peak memory; default: peak_memory for a claim about memory, else throughput')),
    baseline: optional(paramRecord(paramValue, 'parameter values of the "before" side (on top of the fixed and chosen ones)'), {}),
    candidate: optional(paramRecord(paramValue, 'parameter values of the "after" side'), {}),
    baseline_command: optional(s.array(s.string(), { minItems: 1, description: 'command workloads: the "before" program and arguments, replacing workload.command' })),
    candidate_command: optional(s.array(s.string(), { minItems: 1, description: 'command workloads: the "after" program and arguments' })),
    tolerance: optional(s.number({ min: 0, max: 1, description: 'a point claim such as "8x" is widened on the log scale of its effect: ln 8 / (1 + t) to ln 8 * (1 + t)' }), 0.2),
    noise_band: optional(s.number({ min: 0, max: 0.5, description: 'a confirmed claim needs its CI clear of 1 +/- this band on the claimed side' }), 0.01),
    min_pairs: optional(s.number({ integer: true, min: 3, description: 'interleaved baseline/candidate pairs before the first look (at least 3)' }), 5),
    max_pairs: optional(positiveInt('the most pairs: looks at about 1.4x steps add pairs until the verdict is decided'), 20),
    steps: optional(positiveInt('timed steps per trial (default measure.steps)')),
    budget: optional(budget, {}),
    requires: optional(s.literal(['cuda'] as const, 'cuda: the claim is about GPUs; without one it is reported as skipped, never as passed')),
  },
  'Checks a claimed effect: interleaved baseline/candidate pairs, added until the sequential CI of the effect decides or the budget ends; verdict confirmed, falls short, exceeds, inconclusive or skipped.',
);

const executor = s.object(
  {
    kind: required(s.literal(['local', 'slurm'] as const, 'local: every trial here, one at a time; slurm: sweeps, compares and claims as job arrays, max-batch inside one allocation')),
    partition: optional(s.string({ description: 'sbatch --partition' })),
    account: optional(s.string({ description: 'sbatch --account' })),
    gres: optional(s.string({ description: 'sbatch --gres per task, e.g. "gpu:1"' })),
    cpus_per_task: optional(positiveInt('sbatch --cpus-per-task')),
    mem: optional(s.string({ pattern: /^\d+[KMGT]?$/, hint: 'SLURM memory such as "32G" or "4000M"', description: 'sbatch --mem per task' })),
    time: optional(s.string({ pattern: /^(\d+-)?\d+(:\d+){0,2}$/, hint: 'SLURM time such as "30", "00:30:00" or "1-00:00:00"', description: 'sbatch --time per task' })),
    constraint: optional(s.string({ description: 'sbatch --constraint, e.g. "a100|h100"' })),
    extra_args: optional(s.array(s.string(), { description: 'more sbatch arguments, each one element, e.g. ["--qos=high"]' }), []),
    max_concurrent: optional(positiveInt('K in sbatch --array=0-(N-1)%K: array tasks that may run at once'), 4),
    retries: optional(nonNegativeInt('times a task that ended FAILED, TIMEOUT, OUT_OF_MEMORY, CANCELLED or NODE_FAIL without a record is submitted again'), 1),
    poll: optional(duration('the longest wait between two looks at squeue/sacct (the wait starts at 0.5 s and grows)', { seconds: MAX_POLL_SECONDS, why: 'a longer wait only delays noticing finished tasks; lower executor.poll' }), 10),
  },
  'Where trials run.',
);

const stage = s.tagged('kind', { 'max-batch': maxBatchStage, sweep: sweepStage, compare: compareStage, claim: claimStage });

export const experimentSchema = s.object(
  {
    $schema: optional(s.string()),
    name: required(s.string({ pattern: /^(?=.*\S)[^\u0000-\u001f\u007f]{1,120}$/, hint: 'a name of 1 to 120 printable characters', description: 'names the run; its directory is the name with characters other than letters, digits, ".", "_" and "-" replaced by "_"' })),
    description: optional(s.string()),
    seed: optional(nonNegativeInt('seed for everything random in the run'), 1),
    workload: required(s.tagged('kind', { onnx: onnxWorkload, command: commandWorkload })),
    limits: optional(limits, { mechanism: 'auto', timeout: 300 }),
    measure: optional(measure, { warmup_steps: 2, steps: 10 }),
    objective: optional(objective, { maximize: 'samples_per_second', constraints: {} }),
    executor: optional(executor, { kind: 'local', extra_args: [], max_concurrent: 4, retries: 1, poll: 10 }),
    stages: required(s.array(stage, { minItems: 1 })),
  },
  'A tunebench experiment: a workload, limits, measurement settings and an ordered list of stages.',
);

export type Experiment = Infer<typeof experimentSchema>;
export type StageSpec = Experiment['stages'][number];
export type MaxBatchStageSpec = Infer<typeof maxBatchStage>;
export type SweepStageSpec = Infer<typeof sweepStage>;
export type CompareStageSpec = Infer<typeof compareStage>;
export type ClaimStageSpec = Infer<typeof claimStage>;
export type WorkloadSpec = Experiment['workload'];
export type OnnxWorkloadSpec = Infer<typeof onnxWorkload>;
export type CommandWorkloadSpec = Infer<typeof commandWorkload>;
export type ParamValue = Infer<typeof paramValue>;
export type ExecutorSpec = Infer<typeof executor>;
export { paramValue };

export function jsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://tunebench.dev/schema/experiment.json',
    title: 'tunebench experiment',
    ...experimentSchema.jsonSchema(),
  };
}
