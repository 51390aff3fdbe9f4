// The experiment schema: defaults, messages with paths, "did you mean", and the exported JSON Schema.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../harness/errors.js';
import { experimentIssues } from '../../support/issues.js';
import { jsonSchema } from '../../../harness/experiment/schema.js';
import { closest } from '../../../harness/experiment/did-you-mean.js';
import { parseExperimentText } from '../../../harness/engine/load.js';

const minimal = `
name: t
workload: { kind: onnx, model: { generate: mlp } }
limits: { memory: 2GiB }
stages: [{ kind: max-batch }]
`;

function issues(text: string): string[] {
  const found = experimentIssues(text);
  if (found.length === 0) assert.fail('expected a ConfigError');
  return found;
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
    assert.deepEqual(
      found.map((f) => f.split(':')[0]).sort(),
      ['limits.timeot', 'measure.steps', 'stages[0].multiple_of', 'workload.model.hiden'].sort(),
    );
    assert.ok(found.some((f) => f.includes('did you mean "hidden"')));
    assert.ok(found.some((f) => f.includes('did you mean "timeout"')));
    assert.ok(found.includes('stages[0].multiple_of: expected a positive integer, got "8x"'));
  });

  it('gives the line of each problem, and lists problems in the order of the file', () => {
    let message = '';
    try {
      parseExperimentText(
        'name: t\nworkload: { kind: onnx, model: { generate: mlp } }\nstages:\n' +
          '  - kind: max-batch\n    multiple_of: 0\nlimits: { memory: lots }\n',
        '/x/exp.yaml',
      );
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      message = error.message;
      assert.deepEqual(
        error.issues.map((i) => [i.path, (i as { line?: number }).line]),
        [
          ['stages[0].multiple_of', 5],
          ['limits.memory', 6],
        ],
      );
    }
    assert.match(
      message,
      /\n {2}stages\[0\]\.multiple_of: expected a positive integer, got 0 \(line 5\)\n {2}limits\.memory: expected a size such as "2GiB", "800MB" or a number of bytes, got "lots" \(line 6\)$/,
    );
  });

  it('gives lines in JSON files and for cross-field problems too', () => {
    const json =
      '{\n  "name": "t",\n  "workload": {"kind": "onnx", "model": {"generate": "mlp"}},\n' +
      '  "stages": [\n    {"kind": "max-batch"}\n  ]\n}';
    assert.throws(
      () => parseExperimentText(json, '/x/exp.json'),
      /stages\[0\]: a max-batch stage on CPU needs limits\.memory.* \(line 5\)/,
    );
    // One line (the resolved experiment that resume re-reads): no line is worth naming.
    const oneLine = JSON.stringify({
      name: 't',
      workload: { kind: 'onnx', model: { generate: 'mlp' } },
      stages: [{ kind: 'max-batch', steps: 0 }],
    });
    assert.throws(
      () => parseExperimentText(oneLine, '/x/exp.json', 'json'),
      (error: Error) => error.message.endsWith('\n  stages[0].steps: expected a positive integer, got 0'),
    );
  });

  it('refuses a section of the wrong type instead of taking its defaults', () => {
    const found = issues(minimal.replace('limits: { memory: 2GiB }', 'limits: 5'));
    assert.deepEqual(found, ['limits: expected an object, got 5']);
  });

  it('resolves a model path relative to the experiment file', () => {
    const e = parseExperimentText(
      minimal.replace('{ generate: mlp }', '{ path: models/m.onnx, inputs: { x: [batch, 4] } }'),
      '/exp/dir/e.yaml',
    );
    assert.ok(e.workload.kind === 'onnx');
    assert.deepEqual(e.workload.model, { path: '/exp/dir/models/m.onnx', inputs: { x: ['batch', 4] } });
  });

  it('judges a memory claim on peak memory, which needs no batch size; a speed claim without one is refused', () => {
    const claim = (words: string) => `
name: t
workload: { kind: onnx, model: { generate: mlp } }
stages:
  - { kind: claim, claim: "${words}", baseline: { arena: keep }, candidate: { arena: "off" } }
`;
    const e = parseExperimentText(claim('30% less memory'), '/x/exp.yaml');
    assert.equal(e.stages[0]!.kind, 'claim');
    assert.deepEqual(issues(claim('2x')), [
      'stages[0]: needs a batch size: set workload.params.batch_size or run a max-batch stage before it',
    ]);
  });

  it('suggests close names only', () => {
    assert.equal(closest('stagse', ['stages', 'name']), 'stages');
    assert.equal(closest('multiple', ['multiple_of', 'start']), 'multiple_of');
    assert.equal(closest('zzz', ['stages', 'name']), undefined);
  });

  it('exports a JSON Schema whose required fields match the validator', () => {
    const schema = jsonSchema() as {
      required: string[];
      properties: Record<string, { properties?: Record<string, { oneOf?: unknown[] }> }>;
    };
    assert.deepEqual(schema.required.sort(), ['name', 'stages', 'workload']);
    assert.ok(schema.properties['limits']!.properties!['memory']!.oneOf, 'sizes accept numbers or strings');
  });
});
