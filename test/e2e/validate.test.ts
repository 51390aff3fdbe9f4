// Malformed experiment files: exit code 2 and a message naming the field, what was expected and what was found.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { badFiles, checkRejected, checkRejectedInProcess } from '../support/bad-experiments.js';
import { CLI, ROOT } from '../support/paths.js';
import { loadExperiment } from '../../harness/engine/load.js';

/** Files the command itself rejects, one of each way a file fails: schema, YAML, JSON, the terminal's escapes. */
const THROUGH_THE_CLI = [
  '01-unknown-top-key.yaml',
  '13-yaml-syntax.yaml',
  '14-json-syntax.json',
  '16-name-with-newline.yaml',
];

/** `tunebench schema`, started once for the two tests that read it. */
let schemaRun: Promise<string> | undefined;
const schemaOutput = (): Promise<string> =>
  (schemaRun ??= execa(process.execPath, [CLI, 'schema']).then((r) => r.stdout));

describe('tunebench validate on malformed files', () => {
  const files = badFiles();

  it('has at least 50 distinct malformed files', () => {
    assert.ok(files.length >= 50, `${files.length} files`);
  });

  // Every file through the validator in this process (what the command runs, reported as main reports it),
  // and a sample through the command itself: a process start per file cost most of this suite's time.
  for (const file of files) {
    it(`rejects ${file} with exit 2 and the field path`, async () => {
      assert.equal(checkRejectedInProcess(file), null);
      if (THROUGH_THE_CLI.includes(file)) assert.equal(await checkRejected(file), null);
    });
  }

  it('the sample run through the command is in the corpus', () => {
    for (const file of THROUGH_THE_CLI) assert.ok(files.includes(file), file);
  });

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
      const { experiment } = loadExperiment(join(ROOT, file));
      const kinds = experiment.stages.map((s) => s.kind);
      assert.equal(`${kinds.length} stage${kinds.length === 1 ? '' : 's'}: ${kinds.join(', ')}`, stages, file);
    }
    // The command's own line, for one file of one stage and one of several.
    for (const file of ['experiments/default.yaml', 'test/fixtures/experiments/quick-max-batch.yaml']) {
      const r = await execa(process.execPath, [CLI, 'validate', join(ROOT, file)], { reject: false });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.ok(r.stdout.includes(`valid (${expected[file]!})`), r.stdout);
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
    const schema = JSON.parse(await schemaOutput()) as {
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
      assert.equal(readFileSync(join(ROOT, 'experiments', 'schema.json'), 'utf8'), `${await schemaOutput()}\n`);
    },
  );
});
