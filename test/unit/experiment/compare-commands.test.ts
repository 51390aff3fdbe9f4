// Experiment-file fields behind the one-liners: a compare's per-arm commands, warmup_trials and
// workload.prepare, each checked with the rest of the file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseExperimentText } from '../../../harness/engine/load.js';

const parse = (yaml: string) => parseExperimentText(yaml, '/tmp/x.yaml');

describe('compare commands, warmup_trials and prepare', () => {
  it('accepts per-arm commands on a command workload without a batch size', () => {
    const e = parse(
      [
        'name: x',
        'workload: { kind: command, command: [python, a.py], prepare: [rm, -f, "out.{variant}"] }',
        'stages:',
        '  - kind: compare',
        '    param: variant',
        '    arms: [a, b]',
        '    commands: { b: [python, b.py] }',
        '    warmup_trials: 2',
      ].join('\n'),
    );
    const stage = e.stages[0]!;
    assert.ok(stage.kind === 'compare');
    assert.deepEqual(stage.commands, { b: ['python', 'b.py'] });
    assert.equal(stage.warmup_trials, 2);
  });

  it('names a command keyed by no arm, per-arm commands on ONNX, and a template without a value', () => {
    assert.throws(
      () =>
        parse(
          'name: x\nworkload: { kind: command, command: [a] }\n' +
            'stages: [{ kind: compare, param: v, arms: [1, 2], commands: { "3": [b] } }]\n',
        ),
      /stages\[0\]\.commands\."3": names no arm: expected one of "1", "2"/,
    );
    assert.throws(
      () =>
        parse(
          'name: x\nworkload: { kind: onnx, model: { generate: mlp }, params: { batch_size: 8 } }\n' +
            'stages: [{ kind: compare, param: arena, arms: [keep, "off"], commands: { keep: [b] } }]\n',
        ),
      /per-arm commands need a command workload/,
    );
    assert.throws(
      () =>
        parse(
          'name: x\nworkload: { kind: command, command: [a] }\n' +
            'stages: [{ kind: compare, param: v, arms: [1, 2], commands: { "2": [b, "{w}"] } }]\n',
        ),
      /stages\[0\]\.commands\."2"\[1\]: \{w\} has no value/,
    );
    assert.throws(
      () =>
        parse(
          'name: x\nworkload: { kind: command, command: [a], prepare: [p, "{z}"] }\n' +
            'stages: [{ kind: compare, param: v, arms: [1, 2] }]\n',
        ),
      /workload\.prepare\[1\]: \{z\} has no value/,
    );
    assert.throws(
      () =>
        parse(
          'name: x\nworkload: { kind: command, command: [a] }\n' +
            'stages: [{ kind: compare, param: v, arms: [1, 2], warmup_trials: -1 }]\n',
        ),
      /warmup_trials/,
    );
  });
});
