// What the ONNX child needs to know besides the tuned parameters: the model, its inputs and the step counts.
import type { Dim } from './models/graph.js';
import type { ParamValue } from '../../domain/index.js';
import type { PipelineFault } from './pipeline/messages.js';

export const ONNX_WORKLOAD_ENV = 'TUNEBENCH_ONNX_WORKLOAD';

export type ArenaPolicy = 'keep' | 'shrink-every-run' | 'off';
export const ARENA_POLICIES: readonly ArenaPolicy[] = ['keep', 'shrink-every-run', 'off'];
export type ModelKind = 'mlp' | 'conv' | 'transformer';
export const MODEL_KINDS: readonly ModelKind[] = ['mlp', 'conv', 'transformer'];

/** Sizes of a generated MLP: input features, hidden width, hidden layers, output features. */
export interface MlpParams {
  input: number;
  hidden: number;
  layers: number;
  output: number;
}
/** Sizes of a generated CNN: input channels, image size, first block's width, blocks, classes. */
export interface ConvParams {
  channels: number;
  size: number;
  width: number;
  blocks: number;
  classes: number;
}
/** Sizes of a generated transformer encoder layer: sequence length, width, heads, feed-forward width. */
export interface TransformerParams {
  seq: number;
  dim: number;
  heads: number;
  ffn: number;
}

/** Each generated model's sizes when the experiment file leaves them out: stated once, here. */
export const MODEL_SIZE_DEFAULTS: { mlp: MlpParams; conv: ConvParams; transformer: TransformerParams } = {
  mlp: { input: 1024, hidden: 256, layers: 3, output: 10 },
  conv: { channels: 3, size: 32, width: 16, blocks: 2, classes: 10 },
  transformer: { seq: 64, dim: 64, heads: 4, ffn: 256 },
};

/**
 * onnxruntime-node (1.30) parses only logSeverityLevel, logVerbosityLevel, tag and terminate from
 * run options, so the run config entry memory.enable_memory_arena_shrinkage never reaches ONNX
 * Runtime; running "shrink-every-run" would silently measure "keep".
 */
export const ARENA_SHRINK_UNSUPPORTED =
  '"shrink-every-run" needs the run option memory.enable_memory_arena_shrinkage, ' +
  'which onnxruntime-node does not pass to ONNX Runtime ' +
  '(its run options carry only log levels, tag and terminate); use "keep" or "off"';

export type ExecutionProvider = 'cpu' | 'cuda';
export const EXECUTION_PROVIDERS: readonly ExecutionProvider[] = ['cpu', 'cuda'];

export interface OnnxChildSpec {
  modelPath: string;
  /** Input name to dims; the dim `batch` (or any string) becomes the batch size. */
  inputs: Record<string, Dim[]>;
  warmupSteps: number;
  steps: number;
  seed: number;
  /** When set, the first input comes from the data pipeline instead of a fixed tensor. */
  pipeline?: PipelineSpec;
}

export interface PipelineSpec {
  /** Augmentation passes per sample: the CPU cost of preprocessing. */
  cost: number;
  /** Short epochs the steps are split into; non-persistent workers restart at each. */
  epochs: number;
  fault?: PipelineFault;
}

/** Tuned parameters of the ONNX workload, with the values used when a config leaves one out. */
export interface OnnxParams {
  batch_size: number;
  intra_op_threads: number;
  inter_op_threads: number;
  arena: ArenaPolicy;
  execution_provider: ExecutionProvider;
  num_workers: number;
  prefetch_factor: number;
  persistent_workers: boolean;
}

export const ONNX_PARAM_DEFAULTS: Omit<OnnxParams, 'batch_size'> = {
  intra_op_threads: 0,
  inter_op_threads: 0,
  arena: 'keep',
  execution_provider: 'cpu',
  num_workers: 0,
  prefetch_factor: 2,
  persistent_workers: false,
};

/**
 * A model that tunebench generates: its kind, the seed of its weights and its sizes (the kind's
 * defaults fill the rest).
 */
export type GeneratedModelOptions = { generate: ModelKind; seed?: number } & { [size: string]: unknown };
/** A model file with the shape of each input (a symbolic dimension is the batch). */
export interface FileModelOptions {
  path: string;
  inputs: Record<string, Dim[]>;
}

/** What an ONNX workload needs from the experiment file's `workload` (experiment/ validates it). */
export interface OnnxWorkloadOptions {
  kind: 'onnx';
  model: GeneratedModelOptions | FileModelOptions;
  params?: Record<string, ParamValue | undefined>;
  pipeline?: { cost: number; epochs: number; fault?: PipelineFault } | undefined;
}
