// The eval batch as an answer of its own (issue 32): a second max-batch stage with
// param: eval_batch_size searches the eval loop's batch at the training batch the first stage chose.
// test/fixtures/programs/eval-budget.mjs trains with `batch` samples' worth of a budget of 200 and runs
// eval at each epoch's end with half of that plus a quarter per eval sample: the training max is 200, and
// at 200 eval fits up to 400. Its failures are in eval, and the report says so.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { journal, resultOf, runDir } from '../support/runs.js';
import { readRunJson } from '../../harness/experiment/run-file.js';

describe('the eval batch', () => {
  it(
    'is searched at the chosen training batch, is larger than it, and is written beside it',
    { timeout: 60_000 },
    async () => {
      const search =
        'steps: 2, confirm_steps: 3, throughput_points: 0, choose: max, place_by: count, repeat_boundary: 0';
      const file = commandExperiment(
        tempDir(),
        'eval-max',
        [process.execPath, join(PROGRAMS, 'eval-budget.mjs'), '--budget=200'],
        ['  protocol: required'],
        [
          'limits: { memory: 1GiB, timeout: 30s }',
          'measure: { warmup_steps: 0, steps: 2 }',
          'stages:',
          `  - { kind: max-batch, name: train-batch, multiple_of: 8, start: 8, ceiling: 1024, ${search} }`,
          '  - { kind: max-batch, name: eval-batch, param: eval_batch_size, multiple_of: 16, start: 64, ' +
            `ceiling: 4096, ${search} }`,
        ],
      );
      const out = tempDir();
      const r = await execa(process.execPath, [CLI, 'run', file, '--out', out], { reject: false, all: true });
      assert.equal(r.exitCode, 0, r.all);
      const dir = runDir(out, 'eval-max');
      const { result } = readRunJson(dir, 'the test reads it');
      assert.ok(result);
      const train = resultOf(result.stages[0], 'max-batch');
      const evalStage = resultOf(result.stages[1], 'max-batch');
      assert.equal(train.max, 200);
      assert.equal(evalStage.param, 'eval_batch_size');
      assert.equal(evalStage.max, 400, 'eval keeps no gradients: its max is twice the training batch here');
      assert.equal(evalStage.smallestFail, 416);
      assert.deepEqual(result.chosen, { batch_size: 200, eval_batch_size: 400 });
      const chosen = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
        config: Record<string, unknown>;
      };
      assert.deepEqual(chosen.config, { batch_size: 200, eval_batch_size: 400 });
      // Every eval-stage trial trains at the chosen batch; its failures are in eval, as the record and the report say.
      const records = journal(dir).filter((t) => t.stage === 'eval-batch');
      assert.ok(records.length > 0 && records.every((t) => t.config['batch_size'] === 200));
      const failed = records.filter((t) => t.outcome === 'oom');
      assert.ok(failed.length > 0);
      assert.ok(failed.every((t) => t.failed_in?.phase === 'eval' && Number(t.config['eval_batch_size']) > 400));
      assert.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /eval\\_batch\\_size=416\): OOM in eval \(epoch 0/);
    },
  );
});
