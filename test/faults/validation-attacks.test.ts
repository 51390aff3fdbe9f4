// Experiment files written to attack validation (issue 15): each must end in exit 2 with the file
// named, quickly; and workload.env must not choose which prlimit the harness runs.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { planLimit } from '../../harness/trial/limits.js';
import { runProcessTrial } from '../../harness/trial/process.js';
import { CLI, tempDir } from '../support/paths.js';
import { requireSystem } from '../support/system.js';

async function validate(
  name: string,
  text: string,
): Promise<{ exitCode: number | undefined; stderr: string; path: string; ms: number }> {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  const t0 = Date.now();
  const r = await execa(process.execPath, [CLI, 'validate', path], { reject: false, timeout: 30_000 });
  return { exitCode: r.exitCode, stderr: r.stderr, path, ms: Date.now() - t0 };
}

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

const command = (params: string) =>
  `name: t\nworkload: { kind: command, command: [prog], params: { ${params} } }\n` +
  `stages: [{ kind: compare, param: a, arms: [1, 2] }]\n`;

describe('tunebench validate against hostile experiment files', () => {
  it('a YAML alias bomb: exit 2 within seconds, naming the file', async () => {
    const r = await validate('bomb.yaml', aliasBomb());
    assert.equal(r.exitCode, 2, r.stderr);
    assert.ok(r.stderr.includes(r.path), r.stderr);
    assert.ok(r.ms < 10_000, `took ${r.ms} ms`);
  });

  it('a 2 MiB file: exit 2 with the size and the limit', async () => {
    const r = await validate('big.yaml', `${command('batch_size: 1')}# ${'x'.repeat(2 * 2 ** 20)}\n`);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /big\.yaml: .*2\.00 MiB.*limit of 1\.00 MiB/);
  });

  it('a JSON file with a duplicate key: exit 2 naming the file and the key', async () => {
    const r = await validate(
      'dup.json',
      '{"name": "t", "workload": {"kind": "command", "command": ["prog"], "params": {"batch_size": 1}}, ' +
        '"stages": [{"kind": "compare", "param": "a", "arms": [1, 2]}], "name": "u"}',
    );
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /dup\.json: .*duplicate key "name"/);
  });

  it('a parameter named constructor, steps or __proto__: exit 2 at validation, not a crash at the report', async () => {
    for (const name of ['constructor', 'steps', '__proto__']) {
      const r = await validate(`${name}.yaml`, command(`batch_size: 1, ${name}: 3`));
      assert.equal(r.exitCode, 2, `${name}: ${r.stderr}`);
      assert.match(
        r.stderr,
        new RegExp(`workload\\.params\\.("?)${name.replace(/_/g, '_')}\\1: .*rename the parameter`),
      );
    }
  });

  it('a 30-day trial timeout: exit 2 naming limits.timeout', async () => {
    const r = await validate(
      'timeout.yaml',
      command('batch_size: 1').replace('stages:', 'limits: { timeout: 720h }\nstages:'),
    );
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /limits\.timeout: .*at most/);
  });

  it('YAML nested 100 000 deep: exit 2 saying how deep, not a stack overflow (issue 45)', async () => {
    const r = await validate(
      'deep.yaml',
      `name: t
x: ${'['.repeat(100_000)}${']'.repeat(100_000)}
`,
    );
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /deep\.yaml: nested more than 64 levels deep/);
    assert.doesNotMatch(r.stderr, /call stack/);
  });

  it('a NUL in a parameter value or an env value: exit 2 at validation (issue 45)', async () => {
    for (const [name, text] of [
      ['nul-param.yaml', command('batch_size: 1, tag: "a\\0b"')],
      ['nul-env.yaml', command('batch_size: 1').replace('params:', 'env: { X: "a\\0b" }, params:')],
    ] as const) {
      const r = await validate(name, text);
      assert.equal(r.exitCode, 2, r.stderr);
      assert.match(r.stderr, /contains a NUL character \(at 1\)/, name);
    }
  });

  it('workload.env setting TUNEBENCH_WARM_SERVER or TUNEBENCH_BRACKET: exit 2 (issue 45)', async () => {
    for (const variable of ['TUNEBENCH_WARM_SERVER', 'TUNEBENCH_BRACKET']) {
      const r = await validate(
        'env.yaml',
        command('batch_size: 1').replace('params:', `env: { ${variable}: "1" }, params:`),
      );
      assert.equal(r.exitCode, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${variable} is set by tunebench`));
    }
  });

  it('limits.memory: 1 (one byte): exit 2 at validation, not a cgroup blamed at the run (issue 45)', async () => {
    const r = await validate(
      'tiny.yaml',
      command('batch_size: 1').replace('stages:', 'limits: { memory: 1 }\nstages:'),
    );
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /limits\.memory: expected at least 16\.00 MiB, got 1; .*write "1GiB", not 1/);
  });
});

describe(
  "prlimit is not looked up on the workload's PATH",
  {
    skip: requireSystem('prlimit'),
  },
  () => {
    it('plans an absolute prlimit', () => {
      const limit = planLimit(2 ** 30, 'prlimit');
      assert.match(limit.prefix[0]!, /^\/.*\/prlimit$/);
    });

    it('a workload.env PATH with a fake prlimit first does not run the fake', async () => {
      const dir = tempDir();
      const marker = join(dir, 'fake-prlimit-ran');
      const fake = join(dir, 'prlimit');
      writeFileSync(fake, `#!/bin/sh\necho hijacked > ${JSON.stringify(marker)}\nshift 2\nexec "$@"\n`);
      chmodSync(fake, 0o755);
      const result = await runProcessTrial({
        argv: [process.execPath, '-e', 'process.exit(0)'],
        env: { PATH: `${dir}:${process.env['PATH'] ?? ''}` },
        timeoutSeconds: 30,
        memoryBytes: 4 * 2 ** 30,
        mechanism: 'prlimit',
        eventsRequired: false,
        scratchDir: dir,
        trialId: 't0000',
      });
      assert.equal(existsSync(marker), false, 'the fake prlimit on the workload PATH ran');
      assert.equal(result.limit.mechanism, 'prlimit-as');
    });
  },
);
