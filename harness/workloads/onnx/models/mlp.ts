// A multi-layer perceptron: [batch, input] -> (MatMul, Add, Relu) x layers -> [batch, output].
import { GraphBuilder } from './graph.js';
import type { GeneratedModel } from './types.js';
import { MODEL_SIZE_DEFAULTS, type MlpParams } from '../spec.js';

export type { MlpParams };

export const MLP_DEFAULTS: MlpParams = MODEL_SIZE_DEFAULTS.mlp;

export function buildMlp(p: MlpParams, seed: number): GeneratedModel {
  const g = new GraphBuilder(seed);
  let x = 'input';
  let width = p.input;
  for (let i = 0; i < p.layers; i++) {
    const h = g.op('MatMul', [x, g.weight([width, p.hidden], width)]);
    x = g.op('Relu', [g.op('Add', [h, g.constant([p.hidden], 0.01)])]);
    width = p.hidden;
  }
  const logits = g.op('MatMul', [x, g.weight([width, p.output], width)]);
  g.nodes.push({ opType: 'Identity', input: [logits], output: ['output'], name: 'output' });
  const inputs = [{ name: 'input', dims: ['batch', p.input] }];
  return { bytes: g.build('mlp', inputs, [{ name: 'output', dims: ['batch', p.output] }]), inputs };
}
