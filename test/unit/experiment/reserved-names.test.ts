// Names a user may not give (issue 15, items 4 and 11): JavaScript's own object properties
// ("constructor", "__proto__", ...) and names whose TUNEBENCH_<NAME> variable is a protocol variable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../harness/errors.js';
import { HARNESS_ENV } from '../../../harness/experiment/names.js';
import { TRIAL_MARK_ENV } from '../../../harness/trial/process.js';
import { WARM_SERVER_ENV } from '../../../harness/trial/warm-server.js';
import { BRACKET_ENV } from '../../../harness/trial/bracket-session.js';
import { ONNX_WORKLOAD_ENV } from '../../../harness/workloads/onnx/spec.js';
import { ENV } from '../../../harness/workloads/protocol/events.js';
import { parseExperimentText } from '../../../harness/engine/load.js';

function rejection(text: string, source = '/x/exp.yaml'): string {
  try {
    parseExperimentText(text, source);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('expected the experiment to be rejected');
}

const command = (params: string, stages = '[{ kind: sweep, params: { batch_size: [1, 2] } }]', extra = '') => `
name: t
workload: { kind: command, command: [prog], params: { ${params} }${extra} }
stages: ${stages}
`;

describe('parameter names that are JavaScript object properties', () => {
  for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty']) {
    it(`rejects workload.params.${name} and says to rename it`, () => {
      const message = rejection(command(`${name}: 3`));
      assert.match(message, new RegExp(`workload\\.params\\.${name}: `));
      assert.match(message, /JavaScript object/);
      assert.match(message, /rename the parameter/);
    });
  }

  it('rejects a swept, compared, searched or claimed "constructor"', () => {
    assert.match(
      rejection(command('', '[{ kind: sweep, params: { batch_size: [1], constructor: [1, 2] } }]')),
      /stages\[0\]\.params\.constructor: .*rename the parameter/,
    );
    assert.match(
      rejection(command('batch_size: 1', '[{ kind: compare, param: constructor, arms: [1, 2] }]')),
      /stages\[0\]\.param: .*"constructor".*rename/,
    );
    assert.match(
      rejection(command('', '[{ kind: max-batch, param: constructor }]', ', python: py')),
      /stages\[0\]\.param: .*"constructor"/,
    );
    assert.match(
      rejection(
        command('batch_size: 1', '[{ kind: claim, claim: "2x", baseline: { valueOf: 1 }, candidate: { valueOf: 2 } }]'),
      ),
      /stages\[0\]\.baseline\.valueOf: .*rename/,
    );
    assert.match(
      rejection(command('', '[{ kind: sweep, params: { batch_size: [1], a: [1] }, applies_when: { toString: a } }]')),
      /applies_when\.toString: /,
    );
  });

  it('rejects an environment variable named toString', () => {
    assert.match(
      rejection(command('batch_size: 1', undefined, ', env: { toString: x }')),
      /workload\.env\.toString: .*JavaScript object/,
    );
  });

  it('does not accept an unknown key that only Object.prototype has', () => {
    assert.match(
      rejection(
        command('batch_size: 1', undefined, '').replace(
          'stages:',
          'limits: { constructor: 1 }\nobjective: { constraints: { toString: 1 } }\nstages:',
        ),
      ),
      /limits\.constructor: [\s\S]*objective\.constraints\.toString: /,
    );
    assert.match(
      rejection('name: t\nworkload: { kind: constructor }\nstages: [{ kind: toString }]\n'),
      /workload\.kind: expected one of "onnx", "command", got "constructor"/,
    );
  });
});

describe('__proto__ is seen and rejected, never dropped', () => {
  it('in YAML: workload params, sweep params, claim sides and env', () => {
    assert.match(rejection(command('__proto__: 3')), /workload\.params\.__proto__: .*reserved.*rename the parameter/);
    assert.match(
      rejection(command('', '[{ kind: sweep, params: { batch_size: [1], __proto__: [1, 2] } }]')),
      /stages\[0\]\.params\.__proto__: .*rename the parameter/,
    );
    assert.match(
      rejection(
        command(
          'batch_size: 1',
          '[{ kind: claim, claim: "2x", baseline: { a: 1 }, candidate: { __proto__: { a: 2 } } }]',
        ),
      ),
      /stages\[0\]\.candidate\.__proto__: /,
    );
    assert.match(
      rejection(command('batch_size: 1', undefined, ', env: { __proto__: { PATH: /tmp } }')),
      /workload\.env\.__proto__: /,
    );
  });

  it('in JSON, where JSON.parse keeps it as an own key', () => {
    const json = JSON.stringify({
      name: 't',
      workload: { kind: 'command', command: ['prog'] },
      stages: [{ kind: 'sweep', params: { batch_size: [1], XPROTO: [1, 2] } }],
    }).replace('XPROTO', '__proto__');
    assert.match(rejection(json, '/x/exp.json'), /stages\[0\]\.params\.__proto__: .*rename the parameter/);
    const top =
      '{"__proto__": {"x": 1}, "name": "t", ' +
      '"workload": {"kind": "command", "command": ["prog"], "params": {"batch_size": 1}}, ' +
      '"stages": [{"kind": "compare", "param": "a", "arms": [1, 2]}]}';
    assert.match(rejection(top, '/x/exp.json'), /\n {2}__proto__: unknown key; allowed keys: /);
  });
});

describe('parameter names that collide with the workload protocol', () => {
  for (const [name, variable] of [
    ['steps', 'TUNEBENCH_STEPS'],
    ['warmup_steps', 'TUNEBENCH_WARMUP_STEPS'],
    ['config', 'TUNEBENCH_CONFIG'],
    ['events', 'TUNEBENCH_EVENTS'],
    ['trial-id', 'TUNEBENCH_TRIAL_ID'],
    ['Trial_Mark', 'TUNEBENCH_TRIAL_MARK'],
  ] as const) {
    it(`rejects a parameter "${name}" (it would overwrite ${variable})`, () => {
      const message = rejection(command(`${JSON.stringify(name)}: 3`));
      assert.ok(message.includes(`${variable}`), message);
      assert.match(message, /workload protocol/);
      assert.match(message, /rename the parameter/);
    });
  }

  it('rejects swept, compared and claimed protocol names', () => {
    assert.match(
      rejection(command('', '[{ kind: sweep, params: { batch_size: [1], steps: [1, 2] } }]')),
      /stages\[0\]\.params\.steps: .*TUNEBENCH_STEPS.*measure\.steps/,
    );
    assert.match(
      rejection(command('batch_size: 1', '[{ kind: compare, param: config, arms: [1, 2] }]')),
      /stages\[0\]\.param: .*TUNEBENCH_CONFIG/,
    );
    assert.match(
      rejection(
        command(
          'batch_size: 1',
          '[{ kind: claim, claim: "2x", baseline: { warmup_steps: 1 }, candidate: { warmup_steps: 2 } }]',
        ),
      ),
      /stages\[0\]\.baseline\.warmup_steps: .*TUNEBENCH_WARMUP_STEPS/,
    );
  });

  it('rejects workload.env entries that tunebench would overwrite', () => {
    assert.match(
      rejection(command('batch_size: 1', undefined, ', env: { TUNEBENCH_STEPS: "5" }')),
      /workload\.env\.TUNEBENCH_STEPS: .*workload protocol/,
    );
    assert.match(
      rejection(command('batch_size: 1', undefined, ', env: { TUNEBENCH_BATCH_SIZE: "5" }')),
      /workload\.env\.TUNEBENCH_BATCH_SIZE: .*batch_size/,
    );
  });

  it('still accepts ordinary names, and env variables of its own', () => {
    const e = parseExperimentText(
      command(
        'batch_size: 1, step_count: 2',
        '[{ kind: compare, param: a, arms: [1, 2] }]',
        ', env: { OMP_NUM_THREADS: "1", TUNEBENCH_DEBUG: "1" }',
      ),
      '/x/exp.yaml',
    );
    assert.ok(e.workload.kind === 'command');
    assert.deepEqual(e.workload.params, { batch_size: 1, step_count: 2 });
  });

  it('knows every variable that the harness sets', () => {
    assert.deepEqual(
      [...HARNESS_ENV].sort(),
      [...Object.values(ENV), TRIAL_MARK_ENV, ONNX_WORKLOAD_ENV, WARM_SERVER_ENV, BRACKET_ENV].sort(),
    );
  });
});
