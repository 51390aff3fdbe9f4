// The chosen config's three files carry the same values, and the .env file is shell-safe.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { buildChosenConfig, writeChosenConfig } from '../../../harness/report/chosen-config.js';
import { fingerprint } from '../../../harness/telemetry/fingerprint.js';
import { CommandWorkload } from '../../../harness/workloads/command/workload.js';
import { PROGRAMS, tempDir } from '../../support/paths.js';

describe('chosen config files', () => {
  it('agree with each other and survive shell quoting', () => {
    const dir = tempDir();
    const config = { batch_size: 4096, arena: 'keep', tricky: "it's $HOME `x`" };
    const chosen = buildChosenConfig({
      experiment: 'e',
      runId: 'r1',
      config,
      evidence: {},
      fingerprint: fingerprint(),
      memoryLimit: 1e9,
      experimentPath: 'exp.yaml',
    });
    writeChosenConfig(dir, chosen);
    const json = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as { config: unknown };
    const yaml = parse(readFileSync(join(dir, 'chosen-config.yaml'), 'utf8')) as { config: unknown };
    assert.deepEqual(json.config, config);
    assert.deepEqual(yaml.config, config);
    const out = execFileSync('bash', [
      '-c',
      `set -a; . "${join(dir, 'chosen-config.env')}"; ` +
        `printf '%s\\n%s\\n%s' "$TUNEBENCH_BATCH_SIZE" "$TUNEBENCH_TRICKY" "$TUNEBENCH_CONFIG"`,
    ]).toString();
    const [batch, tricky, whole] = out.split('\n');
    assert.equal(batch, '4096');
    assert.equal(tricky, config.tricky);
    assert.deepEqual(JSON.parse(whole!), config);
  });

  it("without a program of the user's (ONNX), reproduce is the tuning run and no .args is written", () => {
    const dir = tempDir();
    const chosen = buildChosenConfig({
      experiment: 'e',
      runId: 'r1',
      config: { batch_size: 64 },
      evidence: {},
      fingerprint: fingerprint(),
      memoryLimit: null,
      experimentPath: 'exp.yaml',
    });
    writeChosenConfig(dir, chosen);
    assert.deepEqual(chosen.reproduce.command, ['tunebench', 'run', 'exp.yaml']);
    assert.deepEqual(chosen.retune.command, ['tunebench', 'run', 'exp.yaml']);
    assert.equal(chosen.reproduce.env['TUNEBENCH_BATCH_SIZE'], '64');
    assert.equal(chosen.args, undefined);
    assert.equal(existsSync(join(dir, 'chosen-config.args')), false);
  });

  it(
    'for a command workload, ' + "writes the script's arguments as one shell line that a shell gives back unchanged",
    () => {
      const dir = tempDir();
      const workload = new CommandWorkload(
        {
          kind: 'command',
          python: '/usr/bin/python3',
          command: [
            'train.py',
            '--epochs',
            '1',
            '--bs={batch_size}',
            '--tag',
            '{tag}',
            '--prefetch-factor={prefetch_factor?}',
            '{pin_memory?--pin-memory}',
          ],
        },
        PROGRAMS,
      );
      const config = { batch_size: 64, tag: "it's $HOME `x`", pin_memory: true };
      const chosen = buildChosenConfig({
        experiment: 'e',
        runId: 'r1',
        config,
        evidence: {},
        fingerprint: fingerprint(),
        memoryLimit: null,
        experimentPath: 'exp.yaml',
        workload,
      });
      writeChosenConfig(dir, chosen);
      const expected = ['--bs=64', '--tag', config.tag, '--pin-memory'];
      assert.deepEqual(chosen.args, expected);
      assert.deepEqual(chosen.reproduce.command, ['/usr/bin/python3', 'train.py', '--epochs', '1', ...expected]);
      assert.equal(chosen.reproduce.cwd, PROGRAMS);
      const line = readFileSync(join(dir, 'chosen-config.args'), 'utf8');
      assert.equal(line.split('\n').length, 2, 'one line');
      const back = execFileSync('bash', [
        '-c',
        `eval "set -- $(cat "$1")"; printf '%s\\0' "$@"`,
        '_',
        join(dir, 'chosen-config.args'),
      ])
        .toString()
        .split('\0')
        .slice(0, -1);
      assert.deepEqual(back, expected);
      // The .env file carries the config alone, not the workload's environment.
      assert.doesNotMatch(readFileSync(join(dir, 'chosen-config.env'), 'utf8'), /PYTHONPATH/);
    },
  );

  it('falls back to the tuning run, saying why, when the chosen config leaves a template without a value', () => {
    const workload = new CommandWorkload({ kind: 'command', command: ['train', '--work={work}'] }, PROGRAMS);
    const chosen = buildChosenConfig({
      experiment: 'e',
      runId: 'r1',
      config: { batch_size: 8 },
      evidence: {},
      fingerprint: fingerprint(),
      memoryLimit: null,
      experimentPath: 'exp.yaml',
      workload,
    });
    assert.deepEqual(chosen.reproduce.command, ['tunebench', 'run', 'exp.yaml']);
    assert.match(chosen.reproduce.note ?? '', /runs the tuning again: argument "--work=\{work\}" uses \{work\}/);
    assert.equal(chosen.args, undefined);
  });
});
