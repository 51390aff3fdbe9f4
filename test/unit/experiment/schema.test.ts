// The experiment schema: defaults, messages with paths, "did you mean", and the exported JSON Schema.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../harness/errors.js';
import { parseExperimentText } from '../../../harness/experiment/load.js';
import { jsonSchema } from '../../../harness/experiment/schema.js';
import { closest } from '../../../harness/experiment/schema-kit.js';

const minimal = `
name: t
workload: { kind: onnx, model: { generate: mlp } }
limits: { memory: 2GiB }
stages: [{ kind: max-batch }]
`;

function issues(text: string): string[] {
  try {
    parseExperimentText(text, '/x/exp.yaml');
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.issues.map((i) => `${i.path}: ${i.message}`);
  }
  assert.fail('expected a ConfigError');
}

describe('experiment schema', () => {
  it('fills documented defaults', () => {
    const e = parseExperimentText(minimal, '/x/exp.yaml');
    assert.equal(e.limits.memory, 2 * 2 ** 30);
    assert.equal(e.limits.timeout, 300);
    assert.equal(e.limits.mechanism, 'auto');
    assert.equal(e.measure.steps, 10);
    assert.equal(e.seed, 1);
    const stage = e.stages[0]!;
    assert.ok(stage.kind === 'max-batch');
    assert.equal(stage.multiple_of, 8);
    assert.equal(stage.param, 'batch_size');
    assert.equal(stage.ceiling, 1 << 20);
  });

  it('reports every problem at once, each with its path', () => {
    const found = issues(`
name: t
workload: { kind: onnx, model: { generate: mlp, hiden: 3 } }
limits: { memory: 2GiB, timeot: 5s }
measure: { steps: 2.5 }
stages: [{ kind: max-batch, multiple_of: "8x" }]
`);
    assert.deepEqual(found.map((f) => f.split(':')[0]).sort(), ['limits.timeot', 'measure.steps', 'stages[0].multiple_of', 'workload.model.hiden'].sort());
    assert.ok(found.some((f) => f.includes('did you mean "hidden"')));
    assert.ok(found.some((f) => f.includes('did you mean "timeout"')));
    assert.ok(found.includes('stages[0].multiple_of: expected a positive integer, got "8x"'));
  });

  it('resolves a model path relative to the experiment file', () => {
    const e = parseExperimentText(minimal.replace('{ generate: mlp }', '{ path: models/m.onnx, inputs: { x: [batch, 4] } }'), '/exp/dir/e.yaml');
    assert.ok(e.workload.kind === 'onnx');
    assert.deepEqual(e.workload.model, { path: '/exp/dir/models/m.onnx', inputs: { x: ['batch', 4] } });
  });

  it('suggests close names only', () => {
    assert.equal(closest('stagse', ['stages', 'name']), 'stages');
    assert.equal(closest('multiple', ['multiple_of', 'start']), 'multiple_of');
    assert.equal(closest('zzz', ['stages', 'name']), undefined);
  });

  it('exports a JSON Schema whose required fields match the validator', () => {
    const schema = jsonSchema() as { required: string[]; properties: Record<string, { properties?: Record<string, { oneOf?: unknown[] }> }> };
    assert.deepEqual(schema.required.sort(), ['name', 'stages', 'workload']);
    assert.ok(schema.properties['limits']!.properties!['memory']!.oneOf, 'sizes accept numbers or strings');
  });
});
