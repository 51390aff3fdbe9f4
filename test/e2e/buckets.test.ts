// Max batch per sequence-length bucket, end to end through the CLI, on a plain-Python job whose memory
// is a + 1 KiB*B*L + 4 B*B*L^2 (test/fixtures/programs/bucket_memory.py): every bucket's answer is then
// checked by running its boundary directly, and the bucket map, the recipe and the predictions are read
// back from the files the run wrote.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { journal, resultOf, runDir } from '../support/runs.js';
import { requireSystem } from '../support/system.js';
import { readRunJson } from '../../harness/experiment/run-file.js';

const CAP = 160 * 2 ** 20;
const LENGTHS = [64, 128, 256, 512];
const PROGRAM = join(PROGRAMS, 'bucket_memory.py');

function experiment(dir: string): string {
  return commandExperiment(
    dir,
    'buckets',
    [PROGRAM],
    ['  python: /usr/bin/python3', '  protocol: required'],
    [
      `limits: { memory: ${CAP}, mechanism: prlimit, timeout: 60s }`,
      'measure: { warmup_steps: 1, steps: 2 }',
      'stages:',
      '  - kind: max-batch',
      '    multiple_of: 8',
      '    steps: 2',
      '    confirm_steps: 4',
      '    place_by: count',
      '    choose: max',
      `    buckets: { param: seq, values: [${LENGTHS.join(', ')}] }`,
      '    keep_effective_batch: 256',
      '    base_lr: 0.001',
      '    base_batch: 32',
      // A line of host RSS (a CPU job) is shown only when asked for (issue 32).
      '    predict_cards: true',
    ],
  );
}

async function runDirect(seq: number, batch: number): Promise<string> {
  const workload = new CommandWorkload(
    { kind: 'command', command: [PROGRAM], python: '/usr/bin/python3', protocol: 'required' },
    PROGRAMS,
  );
  const r = await runTrial(
    { workload, limits: { memory: CAP, mechanism: 'prlimit', timeout: 60 }, scratchDir: tempDir() },
    {
      index: 0,
      stage: 'direct',
      role: { kind: 'repeat' },
      config: { batch_size: batch, seq },
      measure: { warmupSteps: 1, steps: 4 },
    },
  );
  return r.outcome;
}

describe('max batch per sequence-length bucket', { skip: requireSystem('python3') }, () => {
  it(
    'finds every bucket exactly, writes the bucket map, keeps the recipe, predicts other cards',
    { timeout: 240_000 },
    async () => {
      const out = tempDir();
      const r = await execa(process.execPath, [CLI, 'run', experiment(tempDir()), '--out', out], {
        reject: false,
        all: true,
      });
      assert.equal(r.exitCode, 0, r.all);
      const dir = runDir(out, 'buckets');
      const { result } = readRunJson(dir, 'the test reads it');
      assert.ok(result);
      const mb = resultOf(result.stages[0], 'max-batch');
      const k = mb.buckets!;
      assert.equal(k.param, 'seq');
      assert.deepEqual(
        k.rows.map((row) => row.value),
        [...LENGTHS].reverse(),
        'longest first',
      );
      const records = journal(dir);
      for (const row of k.rows) {
        assert.equal(row.status, 'exact', `seq ${row.value}`);
        assert.equal(row.chosen, row.max, 'choose: max');
        assert.equal(row.tokens, row.max! * row.value);
        assert.equal(row.smallestFail, row.max! + 8);
        // The boundary, probed directly: the max runs as long as the confirmation, one multiple more does not.
        assert.equal(await runDirect(row.value, row.max!), 'ok', `seq ${row.value}: max ${row.max} runs`);
        assert.equal(await runDirect(row.value, row.max! + 8), 'oom', `seq ${row.value}: ${row.max! + 8} is an OOM`);
      }
      // Shorter buckets fit at least as much (the neighbours' bounds held), and the model guided them.
      for (let i = 1; i < k.rows.length; i++) assert.ok(k.rows[i]!.max! >= k.rows[i - 1]!.max!);
      assert.ok(k.model && k.model.c > 0, 'the quadratic term of the model is found');
      const longestProbes = k.rows[0]!.probesToMax;
      const others = k.rows.slice(1).map((row) => row.probesToMax);
      // The second bucket has one other length to go by (a bracket); from the third on the model is full.
      assert.ok(
        others.slice(1).every((p) => p < longestProbes),
        `buckets guided by the full model need fewer probes than the first: ${longestProbes} then ${others.join(', ')}`,
      );
      assert.equal(k.probes_total, longestProbes + others.reduce((a, b) => a + b, 0));

      // The bucket map for a sampler.
      const map = JSON.parse(readFileSync(join(dir, 'chosen-config.buckets.json'), 'utf8')) as {
        param: string;
        batch_param: string;
        batches: Record<string, number>;
        tokens: Record<string, number>;
      };
      assert.equal(map.param, 'seq');
      assert.equal(map.batch_param, 'batch_size');
      assert.deepEqual(map.batches, Object.fromEntries(k.rows.map((row) => [String(row.value), row.max])));
      assert.deepEqual(map.tokens, Object.fromEntries(k.rows.map((row) => [String(row.value), row.tokens])));

      // The recipe: the largest batch that divides 256 and fits the longest bucket, with accumulation.
      const recipe = mb.recipe!;
      const longestMax = k.rows[0]!.max!;
      assert.ok(recipe.batch! <= longestMax && 256 % recipe.batch! === 0);
      assert.ok(recipe.batch! * 2 > longestMax || 256 % (recipe.batch! * 2) !== 0, 'the largest such batch');
      assert.equal(recipe.batch! * recipe.accumulation_steps!, 256);
      assert.equal(result.chosen['batch_size'], recipe.batch);
      assert.equal(result.chosen['gradient_accumulation_steps'], recipe.accumulation_steps);
      assert.equal(result.chosen['seq'], 512);
      const ran = records.find((t) => recipe.trials.includes(t.index) && t.outcome === 'ok')!;
      assert.equal(ran.config['batch_size'], recipe.batch, 'the recipe batch ran');
      assert.equal(ran.config['seq'], 512);
      assert.ok(
        Math.abs(recipe.lr!.linear - 0.008) < 1e-12 && Math.abs(recipe.lr!.sqrt - 0.001 * Math.sqrt(8)) < 1e-12,
      );

      // Predictions for other cards from fixed + per-sample memory, labelled as such.
      const p = mb.predictions!;
      assert.deepEqual(
        p.rows.map((row) => row.card),
        ['16 GB', '24 GB', '40 GB', '80 GB', '141 GB'],
      );
      assert.deepEqual(
        p.rows.map((row) => row.rule_of_thumb),
        [18, 30, 54, 114, 206],
      );
      for (const row of p.rows) {
        const expected = Math.floor((row.bytes - p.fixed_bytes) / p.per_sample_bytes / 8 + 1e-6) * 8;
        assert.equal(row.predicted, expected);
      }
      assert.match(p.statement, /^predictions, not measurements/);
      assert.equal(p.of_device, false, 'a line of host RSS');
      assert.equal(p.shown, true, 'shown because predict_cards: true asks for it');

      const summary = readFileSync(join(dir, 'summary.md'), 'utf8');
      assert.match(summary, /\| seq \| max batch_size \| tokens per batch \(max\) \|/);
      assert.match(summary, /learning rate, linear rule \| 0\.008 \| a rule, not a measurement/);
      assert.match(summary, /\| 80 GB \| \d+ \(prediction\) \| 114 \|/);
      const chosen = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
        buckets: { map: Record<string, number> };
        recipe: { lr: { statement: string } };
      };
      assert.deepEqual(chosen.buckets.map, map.batches);
      assert.match(chosen.recipe.lr.statement, /^rules, not measurements/);
    },
  );
});
