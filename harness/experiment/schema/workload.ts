// The workload part of the experiment schema: ONNX (a generated model or a file) or any command.
import { z } from 'zod';
import {
  ARENA_POLICIES,
  EXECUTION_PROVIDERS,
  MODEL_KINDS,
  MODEL_SIZE_DEFAULTS,
  type ModelKind,
} from '../../workloads/onnx/spec.js';
import { didYouMean } from '../did-you-mean.js';
import {
  bool,
  either,
  list,
  nonNegativeInt,
  object,
  oneOf,
  paramRecord,
  nulProblem,
  paramValue,
  positiveInt,
  record,
  str,
} from '../fields.js';
import { onUnknownKey } from '../issues.js';
import { envNameProblem } from '../names.js';

const D = MODEL_SIZE_DEFAULTS;
const sizeField = (description: string, fallback: number) => positiveInt(description).default(fallback);
/** Each kind's size fields; `satisfies` keeps them the same names as the builders' parameters. */
const SIZE_FIELDS = {
  mlp: {
    input: sizeField('input features', D.mlp.input),
    hidden: sizeField('hidden width', D.mlp.hidden),
    layers: sizeField('hidden layers', D.mlp.layers),
    output: sizeField('output features', D.mlp.output),
  },
  conv: {
    channels: sizeField('input channels', D.conv.channels),
    size: sizeField('input height and width', D.conv.size),
    width: sizeField('channels of the first block', D.conv.width),
    blocks: sizeField('conv blocks', D.conv.blocks),
    classes: sizeField('output classes', D.conv.classes),
  },
  transformer: {
    seq: sizeField('sequence length', D.transformer.seq),
    dim: sizeField('model width', D.transformer.dim),
    heads: sizeField('attention heads', D.transformer.heads),
    ffn: sizeField('feed-forward width', D.transformer.ffn),
  },
} satisfies { [K in ModelKind]: Record<keyof (typeof D)[K], z.ZodType> };

const MODEL_DESCRIPTIONS: Record<ModelKind, string> = {
  mlp: 'A multi-layer perceptron: [batch, input] -> (MatMul, Add, Relu) x layers -> [batch, output].',
  conv:
    'A small conv net: [batch, channels, size, size] -> ' +
    '(Conv 3x3, Relu, MaxPool 2) x blocks -> global average pool -> Gemm.',
  transformer: 'A pre-norm transformer block: multi-head self-attention and a ReLU MLP, each with a residual.',
};

/** An unknown key of one model kind says which kind takes it, or which key was meant. */
function modelKeyMessage(kind: ModelKind) {
  return (key: string, allowed: readonly string[]): string => {
    const owners = MODEL_KINDS.filter((k) => k !== kind && Object.hasOwn(SIZE_FIELDS[k], key));
    const why = owners.length > 0 ? ` (${key} is a field of ${owners.join(' and ')})` : didYouMean(key, allowed);
    return `unknown key for generate: ${kind}${why}; ${kind} takes ${allowed.join(', ')}`;
  };
}

function generatedModel<K extends ModelKind>(kind: K) {
  const schema = object(
    { generate: z.literal(kind), seed: nonNegativeInt('seed for the weights').default(1), ...SIZE_FIELDS[kind] },
    `generate: ${kind}. ${MODEL_DESCRIPTIONS[kind]}`,
  );
  return onUnknownKey(schema, modelKeyMessage(kind));
}

const GENERATED = {
  mlp: generatedModel('mlp'),
  conv: generatedModel('conv'),
  transformer: generatedModel('transformer'),
};
type Generated = (typeof GENERATED)[ModelKind];

const generated = z
  .discriminatedUnion('generate', MODEL_KINDS.map((k) => GENERATED[k]) as [Generated, ...Generated[]])
  .describe(
    'A model that tunebench generates itself (deterministic, cached by its parameters); ' +
      'each kind takes only its own sizes.',
  );

const dim = either([
  positiveInt(),
  str({ pattern: /^[A-Za-z_][A-Za-z0-9_]*$/, hint: 'a symbolic dimension name such as "batch"' }),
]);
const fileModel = object(
  {
    path: str({ description: 'path to an .onnx file, relative to the experiment file' }),
    inputs: record(list(dim, { min: 1 }), 'input name to shape; a symbolic dimension is the batch size', {
      noun: 'input',
    }),
  },
  'Your own ONNX model; give each float32 input its shape with a symbolic batch dimension.',
);

const model = either(
  [generated, fileModel],
  'a generated model ({ generate: mlp | conv | transformer }) or a model file ({ path, inputs })',
);

/** Parameters of the ONNX workload, in the order messages list them. */
export const onnxParams = object({
  batch_size: positiveInt('samples per step').optional(),
  intra_op_threads: nonNegativeInt('ONNX Runtime intra-op threads; 0 lets ONNX Runtime choose').optional(),
  inter_op_threads: nonNegativeInt('ONNX Runtime inter-op threads; 0 lets ONNX Runtime choose').optional(),
  arena: oneOf(ARENA_POLICIES, 'CPU memory arena: keep, shrink after every run, or off').optional(),
  execution_provider: oneOf(EXECUTION_PROVIDERS, 'ONNX Runtime execution provider').optional(),
  num_workers: nonNegativeInt('data-loader worker threads; 0 preprocesses inline (needs workload.pipeline)').optional(),
  prefetch_factor: positiveInt('batches each worker keeps in flight').optional(),
  persistent_workers: bool('keep the worker pool alive between epochs').optional(),
});

const pipeline = object(
  {
    cost: nonNegativeInt('augmentation passes per sample: the CPU cost of preprocessing'),
    epochs: positiveInt('short epochs per trial; non-persistent workers restart at each').default(2),
    fault: object(
      { kind: oneOf(['throw', 'hang'] as const), batch: nonNegativeInt('batch number at which the fault fires') },
      'fault injection for testing the harness',
    ).optional(),
  },
  'A synthetic data pipeline that feeds the first model input: decoding and augmenting samples on worker threads.',
);

export const onnxWorkload = object(
  {
    kind: z.literal('onnx'),
    model,
    params: onnxParams.prefault({}),
    pipeline: pipeline.optional(),
  },
  'ONNX Runtime in a fresh Node.js child per trial (the embedded default; no Python, no GPU needed).',
);

/** Runs each trial as N ranks under torch.distributed.run (torchrun); see docs/ddp.md. */
export const launcher = object(
  {
    kind: z.literal('torchrun'),
    nproc_per_node: positiveInt('ranks per trial (torchrun --nproc_per_node): one per GPU, or a few on CPU with gloo'),
    python: str({
      description: 'interpreter that runs "-m torch.distributed.run" (default: workload.python, else torchrun on PATH)',
    }).optional(),
  },
  'Run each trial as nproc_per_node ranks on this node with torch.distributed.run: ' +
    "a batch fits when every rank survives; throughput is summed over the ranks, memory is the largest rank's.",
);

export const commandWorkload = object(
  {
    kind: z.literal('command'),
    command: list(str(), {
      min: 1,
      description:
        'program and arguments; ' +
        '"{name}" in an argument becomes that parameter\'s value, "{name:-2}" with a default, ' +
        '"{name?}" leaves the argument out without a value, "{name?--flag}" is --flag when the value is true',
    }),
    python: str({
      description: 'interpreter for "{python}" and for a command that starts with a .py script, e.g. /usr/bin/python3',
    }).optional(),
    prepare: list(str(), {
      min: 1,
      description:
        'a command run before every trial, untimed, with the same templates, working directory and environment ' +
        '(clear a cache, reset output files); a failure stops the run',
    }).optional(),
    conclude: list(str(), {
      min: 1,
      description:
        'a command run after every trial, untimed, with the same templates, working directory and environment; ' +
        'a failure stops the run',
    }).optional(),
    ignore_failure: bool(
      'a run that exits non-zero is still timed (its exit code is kept); a signal, timeout or OOM is not',
    ).optional(),
    stdin: str({
      description: 'a file the program reads as its standard input, relative to cwd; default: none',
    }).optional(),
    stdout: str({
      description:
        "where the program's standard output goes: null (discarded), pipe (read and discarded, the default), " +
        'inherit (the terminal), or a file, relative to cwd, rewritten at every run',
    }).optional(),
    stderr: oneOf(
      ['pipe', 'inherit'] as const,
      "pipe: read, and its tail kept in a failed trial's record (the default); inherit: the terminal",
    ).optional(),
    cwd: str({ description: 'working directory, relative to the experiment file' }).optional(),
    env: record(str({ check: nulProblem }), 'extra environment variables', {
      noun: 'variable',
      checkKey: envNameProblem,
    }).optional(),
    params: paramRecord(paramValue, 'fixed parameter values').prefault({}),
    protocol: oneOf(
      ['optional', 'required'] as const,
      'required: a run without step events is invalid; optional: whole-process timing',
    ).default('optional'),
    launcher: launcher.optional(),
    warm_start: oneOf(
      ['off', 'fork'] as const,
      "fork: a Python script's imports and setup() run once in a server process and every trial is a fork() " +
        'of it (the script must call tunebench.main); off: every trial starts the program afresh',
    ).default('off'),
  },
  'Any program, run as an argument array (never through a shell), configured through the workload protocol.',
);

export const workload = z.discriminatedUnion('kind', [onnxWorkload, commandWorkload]);
