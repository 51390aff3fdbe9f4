// A max-batch stage's constraint and predicted_by: what they need of the executor and of the other stages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { experimentIssues } from '../../support/issues.js';
import { parseExperimentText } from '../../../harness/engine/load.js';

function experiment(executor: string, stages: string[]): string {
  return [
    'name: t',
    'workload: { kind: command, command: [train.py, "--batch={batch_size}"], params: { device: cuda } }',
    `executor: ${executor}`,
    'stages:',
    ...stages.map((s) => `  - ${s}`),
    '',
  ].join('\n');
}

const issues = experimentIssues;

const slurm = '{ kind: slurm }';
const first = '{ kind: max-batch, name: a100-80, constraint: gpu80 }';

describe('max-batch constraint and predicted_by', () => {
  it('accepts a stage that confirms an earlier stage on another GPU type', () => {
    const e = parseExperimentText(
      experiment(slurm, [first, '{ kind: max-batch, name: a100-40, constraint: gpu40, predicted_by: a100-80 }']),
      '/x/exp.yaml',
    );
    const s = e.stages[1]!;
    assert.ok(s.kind === 'max-batch');
    assert.equal(s.constraint, 'gpu40');
    assert.equal(s.predicted_by, 'a100-80');
  });

  it('a constraint needs the SLURM executor', () => {
    const found = issues(experiment('{ kind: local }', [first]));
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0]!, /^stages\[0\]\.constraint: .*needs executor: \{ kind: slurm \}.*got executor\.kind local/);
  });

  it('predicted_by names an earlier max-batch stage with the same parameter', () => {
    assert.match(
      issues(experiment(slurm, [first, '{ kind: max-batch, name: b, predicted_by: a100 }'])).join('\n'),
      /stages\[1\]\.predicted_by: expected the name of an earlier max-batch stage \(one of "a100-80"\), got "a100"/,
    );
    assert.match(
      issues(experiment(slurm, ['{ kind: max-batch, name: b, predicted_by: a100-80 }', first])).join('\n'),
      /stages\[0\]\.predicted_by: expected the name of an earlier max-batch stage \(none: add a max-batch stage before this one\), got "a100-80", which runs after this one/,
    );
    assert.match(
      issues(experiment(slurm, ['{ kind: max-batch, name: b, predicted_by: b }'])).join('\n'),
      /stages\[0\]\.predicted_by: .*got "b", this stage itself/,
    );
    assert.match(
      issues(
        experiment(slurm, [
          first,
          '{ kind: sweep, name: loader, params: { num_workers: [0, 2] } }',
          '{ kind: max-batch, name: b, predicted_by: loader }',
        ]),
      ).join('\n'),
      /stages\[2\]\.predicted_by: expected a max-batch stage, .*\(one of "a100-80"\); "loader" is a sweep stage/,
    );
    assert.match(
      issues(
        experiment(slurm, [first, '{ kind: max-batch, name: b, param: micro_batch, predicted_by: a100-80 }']),
      ).join('\n'),
      /stages\[1\]\.param: must be the parameter that "a100-80" searches \(batch_size\)/,
    );
  });

  it('a confirming stage chooses nothing, so it takes no buckets or recipe', () => {
    const found = issues(
      experiment(slurm, [
        first,
        '{ kind: max-batch, name: b, predicted_by: a100-80, keep_effective_batch: 64, ' +
          'buckets: { param: seq_len, values: [128, 256] } }',
      ]),
    );
    assert.ok(
      found.some((f) => /^stages\[1\]\.buckets: a stage with predicted_by .* move buckets to "a100-80"/.test(f)),
      found.join('\n'),
    );
    assert.ok(found.some((f) => f.startsWith('stages[1].keep_effective_batch: a stage with predicted_by')));
  });
});
