// Validation of command templates stage by stage: a value in every stage that runs the command.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { experimentIssues } from '../../support/issues.js';

const issues = experimentIssues;

const experiment = (command: string, stages: string, params = '{}') => `
name: t
workload: { kind: command, command: ${command}, params: ${params} }
limits: { memory: 2GiB }
stages:
${stages}
`;
const maxBatchThenSweep = `  - kind: max-batch
  - kind: sweep
    name: loader
    params: { num_workers: [0, 2], prefetch_factor: [2, 4], pin_memory: [false, true] }
    applies_when: { prefetch_factor: num_workers }`;

describe('command templates, stage by stage', () => {
  it('refuses a parameter that only a later stage gives a value, naming the argument, the stage and the fixes', () => {
    const found = issues(
      experiment('[train.py, "--bs={batch_size}", "--num-workers={num_workers}"]', maxBatchThenSweep),
    );
    assert.deepEqual(found, [
      'workload.command[2]: "--num-workers={num_workers}" uses {num_workers}, which has no value in stage ' +
        'max-batch-1 (stages[0]): num_workers gets a value only in the later stage loader (stages[1]); give it a ' +
        'default ("--num-workers={num_workers:-VALUE}"), make the argument optional ("--num-workers={num_workers?}": ' +
        'left out while num_workers has no value), or fix num_workers in workload.params',
    ]);
  });

  it('accepts a default, an optional argument, a flag, or a fixed value', () => {
    assert.deepEqual(
      issues(
        experiment(
          '[train.py, "--bs={batch_size}", "--num-workers={num_workers:-2}", ' +
            '"--prefetch-factor={prefetch_factor?}", "{pin_memory?--pin-memory}"]',
          maxBatchThenSweep,
        ),
      ),
      [],
    );
    assert.deepEqual(
      issues(experiment('[train.py, "--bs={batch_size}", "--lr={lr}"]', maxBatchThenSweep, '{ lr: 0.1 }')),
      [],
    );
  });

  it('accepts a value chosen by an earlier stage', () => {
    const stages =
      '  - { kind: sweep, params: { num_workers: [0, 2] } }\n' +
      '  - { kind: compare, param: empty_cache, arms: [never, every-step] }';
    assert.deepEqual(
      issues(
        experiment(
          '[train.py, "--num-workers={num_workers}", "--cache={empty_cache?}", "--bs={batch_size}"]',
          stages,
          '{ batch_size: 8 }',
        ),
      ),
      [],
    );
  });

  it('refuses a conditional parameter in a required template and suggests only the optional form', () => {
    const found = issues(
      experiment(
        '[train.py, "--num-workers={num_workers:-0}", "--prefetch-factor={prefetch_factor}"]',
        maxBatchThenSweep,
      ),
    );
    assert.equal(found.length, 1);
    assert.match(
      found[0]!,
      /^workload\.command\[2\]: .* which has no value in stage max-batch-1 \(stages\[0\]\): .*; make the argument optional \("--prefetch-factor=\{prefetch_factor\?\}": left out while prefetch_factor has no value\)$/,
    );
    const inSweep = issues(
      experiment(
        '[train.py, "--num-workers={num_workers}", "--prefetch-factor={prefetch_factor}"]',
        maxBatchThenSweep.replace('  - kind: max-batch\n', ''),
        '{ batch_size: 8 }',
      ),
    );
    assert.deepEqual(inSweep, [
      'workload.command[2]: "--prefetch-factor={prefetch_factor}" uses {prefetch_factor}, which may have no value in ' +
        'stage loader (stages[0]): applies_when leaves it out where num_workers is 0 or false (stages[0]); make the ' +
        'argument optional ("--prefetch-factor={prefetch_factor?}": left out while prefetch_factor has no value)',
    ]);
  });

  it('checks a claim stage side by side, its own commands included, and environment templates', () => {
    const claim = (extra: string) =>
      experiment(
        '[train.py, "--bs={batch_size}"]',
        `  - { kind: claim, claim: 2x, baseline: { workers: 0 }, candidate: { workers: 2 }${extra} }`,
        '{ batch_size: 8 }',
      );
    assert.deepEqual(issues(claim(', candidate_command: [train.py, "--workers={workers}"]')), []);
    const oneSide = issues(
      experiment(
        '[train.py]',
        '  - { kind: claim, claim: 2x, candidate: { workers: 2 }, ' +
          'baseline_command: [train.py, "--w={workers}"], candidate_command: [train.py, "--w={workers}"] }',
        '{ batch_size: 8 }',
      ),
    );
    assert.ok(
      oneSide.some((m) =>
        /^stages\[0\]\.baseline_command\[1\]: "--w=\{workers\}" uses \{workers\}, which has no value in stage claim-1 \(stages\[0\]\), baseline side/.test(
          m,
        ),
      ),
      oneSide.join('\n'),
    );
    const env = issues(
      experiment('[train.py]', '  - kind: max-batch\n  - { kind: sweep, params: { level: [1, 2] } }', '{}').replace(
        'params: {} }',
        'params: {}, env: { LEVEL: "{level}" } }',
      ),
    );
    assert.match(
      env.join('\n'),
      /workload\.env\.LEVEL: "\{level\}" uses \{level\}, which has no value in stage max-batch-1 .*make the variable optional \("\{level\?\}"/,
    );
  });

  it('keeps the did-you-mean hint for a name no stage knows, in every form', () => {
    for (const form of ['{num_worker}', '{num_worker?}', '{num_worker:-1}', '{num_worker?--w}']) {
      const found = issues(experiment(`[train.py, "--bs={batch_size}", "${form}"]`, maxBatchThenSweep));
      assert.deepEqual(
        found,
        [
          'workload.command[2]: {num_worker} has no value: ' +
            'it is not a fixed parameter, a searched or swept one, or "python" (did you mean "{num_workers}"?)',
        ],
        form,
      );
    }
  });

  it("points at the sweep when the sweep's name is the typo and the template's is the parameter's own", () => {
    const found = issues(
      experiment(
        '[train.py, "--bs={batch_size}", "--workers={num_workers}"]',
        '  - kind: max-batch\n  - { kind: sweep, params: { num_worker: [0, 2] } }',
      ),
    );
    assert.deepEqual(found, [
      'stages[1].params.num_worker: "num_worker" is swept, but no template asks for it, while workload.command[2] ' +
        'asks for {num_workers}, which nothing gives a value (did you mean "num_workers"?)',
    ]);
  });

  it('refuses values that a flag cannot take, wherever they are set', () => {
    const found = issues(
      experiment(
        '[train.py, "--bs={batch_size}", "{pin_memory?--pin-memory}"]',
        '  - kind: max-batch\n  - { kind: compare, param: pin_memory, arms: [false, "on"] }',
      ),
    );
    assert.deepEqual(found, [
      'stages[1].arms[1]: pin_memory is the flag {pin_memory?--pin-memory} in workload.command[2], ' +
        'so its values must be true or false (or 1/0), got "on"',
    ]);
  });
});
