// A small conv net: [batch, channels, size, size] -> (Conv 3x3, Relu, MaxPool 2) x blocks -> GAP -> Gemm.
import { GraphBuilder, attr } from './graph.js';
import type { GeneratedModel } from './types.js';
import { MODEL_SIZE_DEFAULTS, type ConvParams } from '../spec.js';

export type { ConvParams };

export const CONV_DEFAULTS: ConvParams = MODEL_SIZE_DEFAULTS.conv;

export function buildConv(p: ConvParams, seed: number): GeneratedModel {
  const g = new GraphBuilder(seed);
  let x = 'input';
  let inChannels = p.channels;
  for (let i = 0; i < p.blocks; i++) {
    const out = p.width * 2 ** i;
    const w = g.weight([out, inChannels, 3, 3], inChannels * 9);
    const conv = g.op('Conv', [x, w, g.constant([out], 0.01)], [attr.ints('pads', [1, 1, 1, 1])]);
    x = g.op('MaxPool', [g.op('Relu', [conv])], [attr.ints('kernel_shape', [2, 2]), attr.ints('strides', [2, 2])]);
    inChannels = out;
  }
  const pooled = g.op('Flatten', [g.op('GlobalAveragePool', [x])], [attr.int('axis', 1)]);
  const logits = g.op('Gemm', [pooled, g.weight([inChannels, p.classes], inChannels), g.constant([p.classes], 0)]);
  g.nodes.push({ opType: 'Identity', input: [logits], output: ['output'], name: 'output' });
  const inputs = [{ name: 'input', dims: ['batch', p.channels, p.size, p.size] }];
  return { bytes: g.build('conv', inputs, [{ name: 'output', dims: ['batch', p.classes] }]), inputs };
}
