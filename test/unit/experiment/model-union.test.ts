// workload.model with `generate`: a union on the kind, each kind with only its own fields and defaults.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../harness/errors.js';
import { MODEL_DEFAULTS, MODEL_KINDS } from '../../../harness/workloads/onnx/models/index.js';
import { ROOT } from '../../support/paths.js';
import { parseExperimentText } from '../../../harness/engine/load.js';

const experiment = (model: string) => `
name: t
workload: { kind: onnx, model: ${model} }
limits: { memory: 2GiB }
stages: [{ kind: max-batch }]
`;

function model(text: string): unknown {
  const e = parseExperimentText(experiment(text), '/x/exp.yaml');
  assert.ok(e.workload.kind === 'onnx');
  return e.workload.model;
}

function rejection(text: string): string {
  try {
    parseExperimentText(experiment(text), '/x/exp.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('expected the model to be rejected');
}

describe('generated models', () => {
  it('fill every size default of their own kind, and only those', () => {
    assert.deepEqual(model('{ generate: mlp }'), {
      generate: 'mlp',
      seed: 1,
      input: 1024,
      hidden: 256,
      layers: 3,
      output: 10,
    });
    assert.deepEqual(model('{ generate: conv, width: 8 }'), {
      generate: 'conv',
      seed: 1,
      channels: 3,
      size: 32,
      width: 8,
      blocks: 2,
      classes: 10,
    });
    assert.deepEqual(model('{ generate: transformer, seed: 7, heads: 8, dim: 128 }'), {
      generate: 'transformer',
      seed: 7,
      seq: 64,
      dim: 128,
      heads: 8,
      ffn: 256,
    });
  });

  it("fill in the model builders' defaults for the sizes left out", () => {
    for (const kind of MODEL_KINDS)
      assert.deepEqual(model(`{ generate: ${kind} }`), { generate: kind, seed: 1, ...MODEL_DEFAULTS[kind] }, kind);
  });

  it('refuse a field of another kind, naming the field, its kind and the fields this kind takes', () => {
    const cases: [string, string, string][] = [
      [
        '{ generate: mlp, heads: 8 }',
        'heads',
        'heads is a field of transformer); mlp takes generate, seed, input, hidden, layers, output',
      ],
      [
        '{ generate: conv, hidden: 64 }',
        'hidden',
        'hidden is a field of mlp); conv takes generate, seed, channels, size, width, blocks, classes',
      ],
      [
        '{ generate: transformer, blocks: 2 }',
        'blocks',
        'blocks is a field of conv); transformer takes generate, seed, seq, dim, heads, ffn',
      ],
    ];
    for (const [text, field, says] of cases) {
      const message = rejection(text);
      assert.match(message, new RegExp(`workload\\.model\\.${field}: unknown key for generate: `), message);
      assert.ok(message.includes(says), message);
    }
  });

  it('suggest the field meant for a misspelled one, and report every misplaced field at once', () => {
    const message = rejection('{ generate: mlp, hiden: 64, ffn: 2 }');
    assert.match(message, /invalid experiment \(2 problems\)/);
    assert.match(message, /workload\.model\.hiden: unknown key for generate: mlp \(did you mean "hidden"\?\)/);
    assert.match(message, /workload\.model\.ffn: .*\(ffn is a field of transformer\)/);
  });

  it('check each size field, and name the kinds when the kind is unknown', () => {
    assert.match(
      rejection('{ generate: conv, size: 0 }'),
      /workload\.model\.size: expected a positive integer, got 0 \(line 3\)/,
    );
    assert.match(
      rejection('{ generate: lstm }'),
      /workload\.model\.generate: expected one of "mlp", "conv", "transformer", got "lstm"/,
    );
    assert.match(rejection('{ generate: transformr }'), /got "transformr" \(did you mean "transformer"\?\)/);
  });

  it('tell a model file from a generated model by the generate key', () => {
    assert.deepEqual(model('{ path: /m.onnx, inputs: { x: [batch, 4] } }'), {
      path: '/m.onnx',
      inputs: { x: ['batch', 4] },
    });
    assert.match(rejection('{ path: m.onnx }'), /workload\.model\.inputs: is required/);
    assert.match(rejection('{ generate: mlp, path: m.onnx }'), /workload\.model\.path: unknown key for generate: mlp/);
    assert.match(rejection('3'), /workload\.model: expected a generated model .* or a model file .*, got 3/);
  });

  it('are validated without loading onnx-proto (the model builders)', () => {
    const load = join(ROOT, 'dist', 'harness', 'engine', 'load.js');
    const script = `import { createRequire } from 'node:module';
const { parseExperimentText } = await import(${JSON.stringify(load)});
parseExperimentText(${JSON.stringify(experiment('{ generate: mlp }'))}, '/x/e.yaml');
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('onnx-proto'));
process.stdout.write(JSON.stringify(loaded));`;
    assert.equal(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }), '[]');
  });
});
