// Generated models by kind, cached on disk by their parameters so each trial loads and never regenerates.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { buildConv, CONV_DEFAULTS, type ConvParams } from './conv.js';
import { buildMlp, MLP_DEFAULTS, type MlpParams } from './mlp.js';
import { buildTransformer, TRANSFORMER_DEFAULTS, type TransformerParams } from './transformer.js';
import type { GeneratedModel } from './types.js';
import type { Dim } from './graph.js';
import type { ModelKind } from '../spec.js';
import { z } from 'zod';

/** Bump when generated graphs change, so stale cache entries are not reused. */
export const GENERATOR_VERSION = 1;

export { MODEL_KINDS, type ModelKind } from '../spec.js';

export const MODEL_DEFAULTS: Readonly<Record<ModelKind, Readonly<Record<string, number>>>> = {
  mlp: MLP_DEFAULTS as unknown as Record<string, number>,
  conv: CONV_DEFAULTS as unknown as Record<string, number>,
  transformer: TRANSFORMER_DEFAULTS as unknown as Record<string, number>,
};

export interface GeneratedModelSpec {
  kind: ModelKind;
  seed: number;
  /** Size parameters; missing ones take MODEL_DEFAULTS[kind]. */
  params: Readonly<Record<string, number>>;
}

export interface ModelFile {
  path: string;
  /** Input name to dims; the string dim `batch` is replaced by the batch size. */
  inputs: Record<string, Dim[]>;
  description: string;
}

export function generate(spec: GeneratedModelSpec): GeneratedModel {
  const params = { ...MODEL_DEFAULTS[spec.kind], ...spec.params };
  switch (spec.kind) {
    case 'mlp':
      return buildMlp(params as unknown as MlpParams, spec.seed);
    case 'conv':
      return buildConv(params as unknown as ConvParams, spec.seed);
    case 'transformer':
      return buildTransformer(params as unknown as TransformerParams, spec.seed);
  }
}

export function defaultCacheDir(): string {
  const base = process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  return join(base, 'tunebench', 'models');
}

/** Returns the cached model file for a spec, generating and writing it atomically on a miss. */
export function ensureModel(spec: GeneratedModelSpec, cacheDir = defaultCacheDir()): ModelFile {
  const params = { ...MODEL_DEFAULTS[spec.kind], ...spec.params };
  const key = JSON.stringify({ v: GENERATOR_VERSION, kind: spec.kind, seed: spec.seed, params: sortKeys(params) });
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 16);
  const path = join(cacheDir, `${spec.kind}-${hash}.onnx`);
  const description = `${spec.kind}(${Object.entries(sortKeys(params))
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}, seed=${spec.seed})`;
  const metaPath = `${path}.json`;
  if (existsSync(path) && existsSync(metaPath)) {
    // A damaged or foreign metadata file is a cache miss: the model is generated again.
    const inputs = cachedInputs(metaPath);
    if (inputs) return { path, inputs, description };
  }
  const model = generate(spec);
  const inputs = Object.fromEntries(model.inputs.map((i) => [i.name, i.dims]));
  mkdirSync(cacheDir, { recursive: true });
  writeAtomic(path, model.bytes);
  writeAtomic(metaPath, JSON.stringify(inputs));
  return { path, inputs, description };
}

function sortKeys(obj: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => a.localeCompare(b)));
}

function writeAtomic(path: string, data: Uint8Array | string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

const inputsSchema = z.record(z.string(), z.array(z.union([z.number(), z.string()])));

function cachedInputs(metaPath: string): Record<string, Dim[]> | null {
  try {
    const read = inputsSchema.safeParse(JSON.parse(readFileSync(metaPath, 'utf8')));
    return read.success ? read.data : null;
  } catch {
    return null;
  }
}
