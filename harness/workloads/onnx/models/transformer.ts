// A pre-norm transformer block: multi-head self-attention and a ReLU MLP, each with a residual.
import { GraphBuilder, attr } from './graph.js';
import type { GeneratedModel } from './types.js';
import { MODEL_SIZE_DEFAULTS, type TransformerParams } from '../spec.js';

export type { TransformerParams };

export const TRANSFORMER_DEFAULTS: TransformerParams = MODEL_SIZE_DEFAULTS.transformer;

export function buildTransformer(p: TransformerParams, seed: number): GeneratedModel {
  if (p.dim % p.heads !== 0) throw new RangeError(`dim (${p.dim}) must be a multiple of heads (${p.heads})`);
  const g = new GraphBuilder(seed);
  const headDim = p.dim / p.heads;
  const norm = (x: string): string =>
    g.op('LayerNormalization', [x, g.constant([p.dim], 1), g.constant([p.dim], 0)], [attr.int('axis', -1)]);
  // [batch, seq, dim] -> [batch, heads, seq, headDim]
  const splitHeads = (x: string): string =>
    g.op('Transpose', [g.op('Reshape', [x, g.int64s([0, 0, p.heads, headDim])])], [attr.ints('perm', [0, 2, 1, 3])]);
  const project = (x: string): string => g.op('MatMul', [x, g.weight([p.dim, p.dim], p.dim)]);

  const h = norm('input');
  const q = splitHeads(project(h));
  const k = splitHeads(project(h));
  const v = splitHeads(project(h));
  const kT = g.op('Transpose', [k], [attr.ints('perm', [0, 1, 3, 2])]);
  const scores = g.op('Mul', [g.op('MatMul', [q, kT]), g.constant([1], 1 / Math.sqrt(headDim))]);
  const weights = g.op('Softmax', [scores], [attr.int('axis', -1)]);
  const context = g.op('Transpose', [g.op('MatMul', [weights, v])], [attr.ints('perm', [0, 2, 1, 3])]);
  const merged = g.op('Reshape', [context, g.int64s([0, 0, p.dim])]);
  const attended = g.op('Add', ['input', project(merged)]);

  const f = norm(attended);
  const up = g.op('Relu', [g.op('MatMul', [f, g.weight([p.dim, p.ffn], p.dim)])]);
  const down = g.op('MatMul', [up, g.weight([p.ffn, p.dim], p.ffn)]);
  const out = g.op('Add', [attended, down]);
  g.nodes.push({ opType: 'Identity', input: [out], output: ['output'], name: 'output' });
  const inputs = [{ name: 'input', dims: ['batch', p.seq, p.dim] }];
  return { bytes: g.build('transformer', inputs, [{ name: 'output', dims: ['batch', p.seq, p.dim] }]), inputs };
}
