// Loading limits (issue 15, items 5 and 17): durations that become Node timers, JSON duplicate keys,
// YAML alias bombs and oversized files are refused as ConfigErrors that name the file and field.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../harness/errors.js';
import { MAX_EXPERIMENT_BYTES } from '../../../harness/experiment/load.js';
import { tempDir } from '../../support/paths.js';
import { loadExperiment, parseExperimentText } from '../../../harness/engine/load.js';

function rejection(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('expected the experiment to be rejected');
}

const yaml = (limits: string, executor = '') => `
name: t
workload: { kind: command, command: [prog], params: { batch_size: 1 } }
limits: { ${limits} }
${executor}
stages: [{ kind: compare, param: a, arms: [1, 2] }]
`;

/** A YAML "billion laughs": 9 levels of 9 aliases each, 9^9 strings once expanded. */
function aliasBomb(): string {
  const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < 9; i++)
    lines.push(
      `a${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(',')}]`,
    );
  return `name: t\n${lines.join('\n')}\n`;
}

describe('durations that become Node timers', () => {
  it('rejects limits.timeout above 7 days, naming the field, the value and the maximum', () => {
    // 30 days: above Node's 2^31-1 ms timer limit, which would end every trial after 1 ms.
    const message = rejection(() => parseExperimentText(yaml('timeout: 720h'), '/x/exp.yaml'));
    assert.match(
      message,
      /limits\.timeout: expected at most 604800 s \(7 days\), got "720h", which is 2592000 s \(30 days\); .*lower limits\.timeout/,
    );
    assert.match(
      rejection(() => parseExperimentText(yaml('timeout: 2592000'), '/x/exp.yaml')),
      /limits\.timeout: .*at most 604800 s.*2592000/,
    );
  });

  it('still accepts a timeout of exactly 7 days', () => {
    assert.equal(parseExperimentText(yaml('timeout: 168h'), '/x/exp.yaml').limits.timeout, 7 * 86400);
  });

  it('rejects an executor poll above one hour', () => {
    assert.match(
      rejection(() =>
        parseExperimentText(yaml('timeout: 60s', 'executor: { kind: slurm, poll: 2592000 }'), '/x/exp.yaml'),
      ),
      /executor\.poll: .*at most 3600 s/,
    );
  });
});

describe('JSON duplicate keys', () => {
  it('are rejected like YAML ones, naming the file, the key and its line', () => {
    const text =
      '{\n  "name": "t",\n' +
      '  "workload": {"kind": "command", "command": ["prog"], "params": {"batch_size": 1, "batch_size": 2}},\n' +
      '  "stages": [{"kind": "compare", "param": "a", "arms": [1, 2]}]\n}';
    const message = rejection(() => parseExperimentText(text, '/x/exp.json'));
    assert.match(message, /^\/x\/exp\.json: .*duplicate key "batch_size".*line 3/);
  });

  it('in the top-level object too, and with escaped keys', () => {
    assert.match(
      rejection(() => parseExperimentText('{"name": "t", "na\\u006de": "u"}', '/x/exp.json')),
      /duplicate key "name"/,
    );
  });

  it('allow the same key in different objects and inside strings', () => {
    const text = JSON.stringify({
      name: 't,"name":',
      workload: { kind: 'command', command: ['prog'], params: { batch_size: 1, name: 'x' } },
      stages: [
        { kind: 'compare', param: 'a', arms: [1, 2] },
        { kind: 'compare', name: 'b', param: 'b', arms: [1, 2] },
      ],
    });
    assert.equal(parseExperimentText(text, '/x/exp.json').name, 't,"name":');
  });
});

describe('YAML alias bombs', () => {
  it('are refused quickly as a ConfigError naming the file', () => {
    const t0 = Date.now();
    const message = rejection(() => parseExperimentText(aliasBomb(), '/x/bomb.yaml'));
    assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
    assert.match(message, /^\/x\/bomb\.yaml: .*alias/);
  });
});

describe('oversized experiment files', () => {
  it('are refused before parsing, with the size and the limit', () => {
    const path = join(tempDir(), 'huge.yaml');
    writeFileSync(path, `name: t\n# ${'x'.repeat(MAX_EXPERIMENT_BYTES)}\n`);
    const message = rejection(() => loadExperiment(path));
    assert.match(message, /huge\.yaml: .*1048\d{3} bytes \(1\.00 MiB\).*limit of 1\.00 MiB/);
    assert.equal(MAX_EXPERIMENT_BYTES, 2 ** 20);
  });

  it('something that never ends (/dev/zero) is refused unread: not a regular file', () => {
    assert.match(
      rejection(() => loadExperiment('/dev/zero')),
      /\/dev\/zero: it is a character device; an experiment file must be a regular file/,
    );
  });

  it('passed as text are refused too', () => {
    assert.match(
      rejection(() => parseExperimentText(`name: t\n# ${'x'.repeat(MAX_EXPERIMENT_BYTES)}\n`, '/x/big.yaml')),
      /\/x\/big\.yaml: .*limit of 1\.00 MiB/,
    );
  });
});
