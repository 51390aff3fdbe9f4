// A max batch must hold in the training that follows: the confirmation spans an epoch boundary and
// the optimizer's first updates, and the chosen batch is confirmed again with the final config (the
// loader settings later stages chose) before it is written. A plain-Python job whose memory grows
// like a real one (test/fixtures/programs/growing_memory.py) makes every step of that exact.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { journal, resultOf, runDir } from '../support/runs.js';
import { requireSystem } from '../support/system.js';
import { readRunJson } from '../../harness/experiment/run-file.js';
import { notesText } from '../support/notes.js';

const CAP = '256MiB';

function experiment(dir: string, stages: string): string {
  return commandExperiment(
    dir,
    'growing',
    [join(PROGRAMS, 'growing_memory.py')],
    ['  python: /usr/bin/python3', '  protocol: required'],
    [
      `limits: { memory: ${CAP}, mechanism: prlimit, timeout: 60s }`,
      'measure: { warmup_steps: 1, steps: 2 }',
      'stages:',
      '  - { kind: max-batch, multiple_of: 8, start: 8, steps: 2, ' +
        'confirm_steps: 8, throughput_points: 0, choose: max }',
      stages,
    ],
  );
}

async function runDirect(batch: number, workers: number): Promise<string> {
  const workload = new CommandWorkload(
    {
      kind: 'command',
      command: [join(PROGRAMS, 'growing_memory.py')],
      python: '/usr/bin/python3',
      protocol: 'required',
    },
    PROGRAMS,
  );
  const r = await runTrial(
    { workload, limits: { memory: 256 * 2 ** 20, mechanism: 'prlimit', timeout: 60 }, scratchDir: tempDir() },
    {
      index: 0,
      stage: 'direct',
      role: { kind: 'final-confirm' },
      config: { batch_size: batch, num_workers: workers },
      measure: { warmupSteps: 1, steps: 8, epochs: 2 },
    },
  );
  return r.outcome;
}

/** Runs the experiment through the CLI; returns its run directory, journal and run.json result. */
async function runGrowing(stages: string) {
  const out = tempDir();
  const r = await execa(process.execPath, [CLI, 'run', experiment(tempDir(), stages), '--out', out], {
    reject: false,
    all: true,
  });
  assert.equal(r.exitCode, 0, r.all);
  const dir = runDir(out, 'growing');
  const { result } = readRunJson(dir, 'the test reads it');
  assert.ok(result, 'the run has a result');
  return { dir, records: journal(dir), run: { result }, mb: resultOf(result.stages[0], 'max-batch') };
}

describe('a max batch that holds in training', { skip: requireSystem('python3') }, () => {
  it(
    'confirms across an epoch boundary, then lowers the batch that fails with the final loader config',
    {
      timeout: 120_000,
    },
    async () => {
      const { dir, records, run, mb } = await runGrowing(
        '  - { kind: sweep, params: { num_workers: [2] }, strategy: grid, repeats: 1 }',
      );

      // The short probes fit more than a run with the optimizer's state: the confirmation caught it.
      assert.equal(mb.confirmed, true);
      assert.match(notesText(run.result.stages[0]!.notes), /passed its probe but failed its confirmation \(oom\)/);
      // After a failed confirmation the search probes until memory flattens (at least confirm_steps): so did the max.
      // The run the answer names is the longest at the max (the confirmation and its repeats reach their
      // plateau at about the same step, so which one that is may vary).
      const long = records.find((t) => t.index === mb.survived.max!.trial)!;
      assert.equal(long.stage, 'max-batch-1');
      assert.equal(long.config['batch_size'], mb.max);
      assert.equal(long.outcome, 'ok');
      assert.equal(long.memory_growth?.verdict, 'plateau');
      assert.ok(long.steps.length >= 8, 'at least confirm_steps');
      assert.ok(long.epochs! >= 2, 'the confirmation-length run spans an epoch boundary');
      const atMax = records.filter(
        (t) => t.config['batch_size'] === mb.max && t.stage === 'max-batch-1' && t.outcome === 'ok',
      );
      assert.ok(atMax.every((t) => t.steps.length <= long.steps.length));
      assert.match(mb.survived.max!.statement, /^survived \d+ steps across \d+ epoch boundar(y|ies)$/);

      // The final config has two workers, whose epochs leave memory behind: the failure joins the band's runs,
      // the band model places the lowered batch, and it passes repeat_boundary + 1 (3) runs in a row with it.
      const final = mb.final_confirmation!;
      assert.equal(final.outcome, 'lowered');
      assert.deepEqual(final.changed, { num_workers: 2 });
      assert.equal(final.from, mb.max);
      const finals = records.filter((t) => t.role.kind === 'final-confirm');
      assert.deepEqual(
        finals.map((t) => t.index),
        final.trials,
      );
      assert.ok(finals.every((t) => t.config['num_workers'] === 2 && (t.outcome !== 'ok' || t.steps.length >= 8)));
      assert.deepEqual([finals[0]!.config['batch_size'], finals[0]!.outcome], [mb.max, 'oom']);
      const written = final.batch!;
      assert.deepEqual(
        finals.slice(-3).map((t) => [t.config['batch_size'], t.outcome]),
        [
          [written, 'ok'],
          [written, 'ok'],
          [written, 'ok'],
        ],
        'the batch written passed 3 runs in a row with the final config',
      );
      assert.ok(
        finals.every((t) => t.outcome === 'ok' || Number(t.config['batch_size']) > written),
        'every failure of the lowering is above the batch written',
      );
      assert.equal(run.result.chosen['batch_size'], written);
      const chosen = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
        config: Record<string, unknown>;
        evidence: Record<string, { rule: string }>;
      };
      assert.equal(chosen.config['batch_size'], written);
      assert.match(chosen.evidence['batch_size']!.rule, /lowered from \d+ by the final confirmation/);
      const evidence = (chosen.evidence['batch_size'] as unknown as { trials: number[] }).trials;
      assert.deepEqual(evidence, [final.survived!.trial]);
      assert.equal(final.survived!.trial, finals.at(-1)!.index);
      // The statement is the final confirmation's own (the report shows it), not repeated among the notes.
      assert.match(
        final.statement,
        /ran out of memory in its final confirmation with the final config \(num_workers=2 chosen after the search\).*lowered to \d+ \(\d+ failed; it passed 3 runs in a row, and the band model puts its chance of failing a run at [\d.]+%\), which survived \d+ steps across/,
      );

      // What was written holds when the training runs with it; what the search alone found does not.
      assert.equal(await runDirect(written, 2), 'ok');
      assert.equal(await runDirect(mb.max!, 2), 'oom');
      const summary = readFileSync(join(dir, 'summary.md'), 'utf8');
      // The report labels each answer with what it survived, and shows the final confirmation.
      assert.match(summary, /\| answer \| batch_size \| note \| what it survived \|/);
      assert.match(
        summary,
        new RegExp(
          `\\| max \\(fits as found\\) \\| ${mb.max} \\| .*max ${mb.max} was found with num\\\\?_workers unset; ` +
            `with the written num\\\\?_workers=2 it ran out of memory \\(trial \\d+\\): it is not a max for the written config \\| ` +
            `survived \\d+ steps across \\d+ epoch boundar.*memory plateau`,
        ),
      );
      assert.match(
        summary,
        new RegExp(
          `\\| final confirmation \\(lowered\\) \\| ${written} \\| .* \\| ` +
            `survived \\d+ steps across \\d+ epoch boundar(y|ies) with num\\\\?_workers=2 \\|`,
        ),
      );
      assert.match(summary, /Answer: batch\\?_size=\d+ .*lowered from \d+ by the final confirmation/);
      // The max is a fact about the workload's default workers: with the written two workers it ran out of memory.
      assert.deepEqual(
        [mb.max_final?.outcome, mb.max_final?.found_with, mb.max_final?.written],
        ['failed', {}, { num_workers: 2 }],
      );
    },
  );

  it('runs no final confirmation when the final config is the one the max survived', { timeout: 60_000 }, async () => {
    const { records, mb } = await runGrowing('');
    assert.equal(mb.final_confirmation, undefined);
    assert.equal(records.filter((t) => t.role.kind === 'final-confirm').length, 0);
  });
});
