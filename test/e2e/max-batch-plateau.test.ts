// Confirm until memory stops growing, not for a fixed count: a job whose memory grows for 15 steps and
// then flattens gets a max that survives 100 direct steps under the same cap, even with the user's
// short settings (steps: 1, confirm_steps: 3); a job that never stops growing is reported as such.
// test/fixtures/programs/plateau_memory.py makes memory per step an exact function of batch and step.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { stepCount } from '../../harness/domain/index.js';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { journal, resultOf, runDir } from '../support/runs.js';
import { requireSystem } from '../support/system.js';
import { readRunJson } from '../../harness/experiment/run-file.js';

const CAP_MIB = 256;
const PROGRAM = join(PROGRAMS, 'plateau_memory.py');

/** Runs a max-batch stage with the user's short settings through the CLI. */
async function search(grow: number, bound: number) {
  const dir = tempDir();
  const file = commandExperiment(
    dir,
    'plateau',
    [PROGRAM],
    ['  python: /usr/bin/python3', '  protocol: required', `  params: { grow_steps: ${grow} }`],
    [
      `limits: { memory: ${CAP_MIB}MiB, mechanism: prlimit, timeout: 60s }`,
      'measure: { warmup_steps: 1, steps: 1 }',
      'stages:',
      '  - { kind: max-batch, multiple_of: 8, start: 8, steps: 1, confirm_steps: 3, ' +
        `confirm_max_steps: ${bound}, throughput_points: 0, choose: max }`,
    ],
  );
  const out = tempDir();
  const r = await execa(process.execPath, [CLI, 'run', file, '--out', out], { reject: false, all: true });
  assert.equal(r.exitCode, 0, r.all);
  const run = runDir(out, 'plateau');
  const { result } = readRunJson(run, 'the test reads it');
  assert.ok(result, 'the run has a result');
  return {
    records: journal(run),
    mb: resultOf(result.stages[0], 'max-batch'),
    chosen: result.chosen,
    summary: readFileSync(join(run, 'summary.md'), 'utf8'),
  };
}

/** The training run directly (no plateau rule): `steps` steps in 2 epochs under the same cap. */
async function direct(batch: number, steps: number) {
  const workload = new CommandWorkload(
    { kind: 'command', command: [PROGRAM], python: '/usr/bin/python3', protocol: 'required' },
    PROGRAMS,
  );
  return runTrial(
    { workload, limits: { memory: CAP_MIB * 2 ** 20, mechanism: 'prlimit', timeout: 60 }, scratchDir: tempDir() },
    {
      index: 0,
      stage: 'direct',
      role: { kind: 'final-confirm' },
      config: { batch_size: batch, grow_steps: 15 },
      measure: { warmupSteps: 1, steps, epochs: 2 },
    },
  );
}

describe('confirmation until memory flattens', { skip: requireSystem('python3') }, () => {
  it(
    'a job growing for 15 steps, then flat: its max survives 100 direct steps, with confirm_steps 3',
    {
      timeout: 120_000,
    },
    async () => {
      const { records, mb, summary } = await search(15, 200);
      assert.equal(mb.status, 'exact');
      assert.equal(mb.confirmed, true);
      // Allocations in steps 0..14; the window starts after the last one (and after the epoch boundary at step 2).
      assert.deepEqual(
        mb.memoryGrowth && {
          verdict: mb.memoryGrowth.verdict,
          at: 'at_step' in mb.memoryGrowth && mb.memoryGrowth.at_step,
        },
        { verdict: 'plateau', at: 24 },
      );
      // The short probes passed far larger batches: a fixed 3-step confirmation would have taken one of them.
      assert.ok(
        records.some(
          (t) => t.role.kind === 'probe' && t.outcome === 'ok' && Number(t.config['batch_size']) >= 2 * mb.max!,
        ),
        'a short probe passed at twice the max',
      );
      // The confirmation was stopped by the harness at the plateau, long before its bound of 200 steps.
      const confirm = records.find(
        (t) => t.config['batch_size'] === mb.max && t.outcome === 'ok' && t.memory_growth?.verdict === 'plateau',
      )!;
      assert.ok(stepCount(confirm.steps) + confirm.warmup_steps < 60, `ran ${stepCount(confirm.steps)} steps`);
      assert.match(confirm.reason, /stopped by the harness when its stop rule was met/);
      assert.equal(confirm.memory_series?.source, 'workload');
      assert.equal(mb.survived.max!.memory_growth?.verdict, 'plateau');
      assert.ok(mb.fastest === null || mb.fastest <= mb.max!, `fastest ${mb.fastest} is above the max`);
      assert.match(
        summary,
        /\| max \(fits\) \| \d+ \| exact; smallest failing batch \d+ \| survived \d+ steps .*memory plateau at step 25/,
      );

      // Run directly for 100 steps under the same cap: the max holds, and one multiple more does not.
      const held = await direct(mb.max!, 100);
      assert.equal(held.outcome, 'ok', held.reason);
      assert.equal(stepCount(held.steps), 100);
      assert.equal((await direct(mb.max! + 8, 100)).outcome, 'oom');
    },
  );

  it(
    'a job that never stops growing is reported as still growing, never as a max that holds',
    {
      timeout: 120_000,
    },
    async () => {
      const { mb, chosen, summary } = await search(-1, 20);
      assert.equal(mb.confirmed, false);
      const g = mb.memoryGrowth!;
      assert.equal(g.verdict, 'growing');
      assert.ok(g.verdict === 'growing' && g.at_bound, 'it ran to its bound');
      // A quarter MiB per sample and step, as the fixture allocates (RSS noise aside).
      const rate = g.verdict === 'growing' ? g.bytes_per_step / 2 ** 20 : 0;
      assert.ok(Math.abs(rate - mb.max! / 4) < 0.05 * (mb.max! / 4), `grew ${rate} MiB/step at ${mb.max}`);
      assert.equal(chosen['batch_size'], mb.max);
      assert.match(summary, /not a max that holds: memory still growing \+[\d.]+ MiB\/step at the bound \(21 steps\)/);
      assert.match(summary, /raise confirm\\?_max\\?_steps/);
      assert.match(summary, /not proven to hold/);
    },
  );
});
