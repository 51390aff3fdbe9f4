// Card predictions only where they mean something: a line fitted on host RSS of a CPU job is kept in
// run.json (predicted_by uses it) but not shown unless predict_cards: true asks for it.
// test/fixtures/programs/alloc-batch.mjs holds 4 MiB per sample, so its RSS grows with the batch.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { resultOf, runDir } from '../support/runs.js';
import { readRunJson } from '../../harness/experiment/run-file.js';

async function run(extra: string) {
  const file = commandExperiment(
    tempDir(),
    'cards',
    [process.execPath, join(PROGRAMS, 'alloc-batch.mjs')],
    ['  protocol: required'],
    [
      'limits: { memory: 512MiB, timeout: 30s }',
      'measure: { warmup_steps: 0, steps: 2 }',
      'stages:',
      '  - { kind: max-batch, multiple_of: 8, start: 8, ceiling: 512, steps: 2, confirm_steps: 0, ' +
        `throughput_points: 0, repeat_boundary: 0, place_by: count${extra} }`,
    ],
  );
  const out = tempDir();
  const r = await execa(process.execPath, [CLI, 'run', file, '--out', out], { reject: false, all: true });
  assert.equal(r.exitCode, 0, r.all);
  const dir = runDir(out, 'cards');
  const { result } = readRunJson(dir, 'the test reads it');
  return { mb: resultOf(result!.stages[0], 'max-batch'), summary: readFileSync(join(dir, 'summary.md'), 'utf8') };
}

describe('card predictions of a CPU job', () => {
  it('are kept but not shown by default, and shown with predict_cards: true', { timeout: 60_000 }, async () => {
    const hidden = await run('');
    assert.ok(hidden.mb.predictions, 'the line is kept for predicted_by');
    assert.equal(hidden.mb.predictions.of_device, false);
    assert.equal(hidden.mb.predictions.shown, false);
    assert.doesNotMatch(hidden.summary, /Other cards|\(prediction\)/);
    const asked = await run(', predict_cards: true');
    assert.equal(asked.mb.predictions?.shown, true);
    assert.match(asked.summary, /Other cards: predictions, not measurements/);
    assert.match(asked.summary, /\| 141 GB \| \d+ \(prediction\) \| 206 \|/);
  });
});
