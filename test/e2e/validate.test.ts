// Malformed experiment files: exit code 2 and a message naming the field, what was expected and what was found.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { badFiles, checkRejected } from '../support/bad-experiments.js';
import { CLI, ROOT } from '../support/paths.js';

describe('tunebench validate on malformed files', () => {
  const files = badFiles();

  it('has at least 50 distinct malformed files', () => {
    assert.ok(files.length >= 50, `${files.length} files`);
  });

  for (const file of files) {
    it(`rejects ${file} with exit 2 and the field path`, async () => {
      assert.equal(await checkRejected(file), null);
    });
  }

  it('accepts the shipped experiments', async () => {
    const expected: Record<string, string> = {
      'experiments/default.yaml': '2 stages: max-batch, compare',
      'experiments/onnx-pipeline.yaml': '1 stage: sweep',
      'experiments/torch-cnn.yaml': '3 stages: max-batch, sweep, compare',
      'experiments/torch-cnn-eval.yaml': '2 stages: max-batch, max-batch',
      'experiments/torch-transformer.yaml': '3 stages: max-batch, sweep, compare',
      'experiments/torch-ddp.yaml': '2 stages: max-batch, sweep',
      'test/fixtures/experiments/quick-max-batch.yaml': '1 stage: max-batch',
      'test/fixtures/experiments/torch-cnn-small.yaml': '3 stages: max-batch, sweep, compare',
      'test/fixtures/experiments/torch-ddp-small.yaml': '2 stages: max-batch, sweep',
    };
    for (const [file, stages] of Object.entries(expected)) {
      const r = await execa(process.execPath, [CLI, 'validate', join(ROOT, file)], { reject: false });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.ok(r.stdout.includes(`valid (${stages})`), r.stdout);
    }
  });

  it('exits 2 for a missing file and for an unknown option', async () => {
    const missing = await execa(process.execPath, [CLI, 'run', join(ROOT, 'no-such.yaml')], { reject: false });
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /cannot read experiment file .*no such file/);
    const unknown = await execa(process.execPath, [CLI, 'run', '--frobnicate'], { reject: false });
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /unknown option '--frobnicate'/);
  });

  it('prints a JSON Schema that rejects unknown keys and lists every stage option', async () => {
    const r = await execa(process.execPath, [CLI, 'schema']);
    const schema = JSON.parse(r.stdout) as {
      additionalProperties: boolean;
      properties: Record<string, { items?: { oneOf?: { properties: Record<string, unknown> }[] } }>;
    };
    assert.equal(schema.additionalProperties, false);
    const stage = schema.properties['stages']!.items!.oneOf![0]!;
    for (const key of ['multiple_of', 'ceiling', 'headroom', 'tolerance', 'confirm_steps'])
      assert.ok(key in stage.properties, key);
  });
});

describe('experiments/schema.json', () => {
  it(
    'matches `tunebench schema` (regenerate with: ' + 'node dist/harness/cli/main.js schema > experiments/schema.json)',
    async () => {
      const r = await execa(process.execPath, [CLI, 'schema']);
      assert.equal(readFileSync(join(ROOT, 'experiments', 'schema.json'), 'utf8'), `${r.stdout}\n`);
    },
  );
});
