// A later stage that fails at the chosen batch (every config of a loader sweep OOMs at it, because
// DataLoader workers hold memory the max-batch probes did not) makes the run lower the batch and run
// the stage again; a batch that failed is never written, and a failure that no lowering rescues is
// the harness's (exit 1, "stage loader: every config OOMed at batch 200"), not "invalid input".
// test/fixtures/programs/loader-budget.mjs needs batch x (1 + 0.5 x workers) + fixed x workers samples
// of a budget of 200, so the exact max without workers is 200, and with one worker 128 (136 needs 204).
// The boundary is sharp here: repeat_boundary 0 keeps the max next to it (the band model has its own tests).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { journal, resultOf, runDir } from '../support/runs.js';
import { readRunJson } from '../../harness/experiment/run-file.js';
import { notesText } from '../support/notes.js';

const LOADER = '  - { kind: sweep, name: loader, params: { num_workers: [1, 2] }, strategy: grid, repeats: 1 }';

async function run(perWorkerFixed: number, o: { repeatBoundary?: number; later?: string; argv?: string[] } = {}) {
  const file = commandExperiment(
    tempDir(),
    'loader-oom',
    [
      process.execPath,
      join(PROGRAMS, 'loader-budget.mjs'),
      '--budget=200',
      '--per-worker=0.5',
      `--per-worker-fixed=${perWorkerFixed}`,
      '--batch={batch_size}',
      ...(o.argv ?? []),
    ],
    ['  protocol: required'],
    [
      'limits: { memory: 1GiB, timeout: 30s }',
      'measure: { warmup_steps: 0, steps: 2 }',
      'stages:',
      '  - { kind: max-batch, multiple_of: 8, start: 8, ceiling: 1024, steps: 2, confirm_steps: 3, ' +
        `throughput_points: 0, choose: max, place_by: count, repeat_boundary: ${o.repeatBoundary ?? 0} }`,
      o.later ?? LOADER,
    ],
  );
  const out = tempDir();
  const r = await execa(process.execPath, [CLI, 'run', file, '--out', out], { reject: false, all: true });
  const dir = runDir(out, 'loader-oom');
  const { result } = readRunJson(dir, 'the test reads it');
  assert.ok(result, r.all);
  const chosen = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
    config: Record<string, unknown>;
    args?: string[];
  };
  return { r, dir, result, chosen, records: journal(dir), mb: resultOf(result.stages[0], 'max-batch') };
}

describe('a later stage that fails at the chosen batch', () => {
  it('lowers the batch under the stage config and runs the stage again', { timeout: 60_000 }, async () => {
    const { r, result, chosen, records, mb } = await run(0);
    assert.equal(r.exitCode, 0, r.all);
    // The first sweep OOMed at 200 in both configs.
    const first = records.filter((t) => t.stage === 'loader' && t.config['batch_size'] === 200);
    assert.deepEqual(
      first.map((t) => [t.config['num_workers'], t.outcome]),
      [
        [1, 'oom'],
        [2, 'oom'],
      ],
    );
    // The lowering ran with the sweep's cheapest config, as long as the confirmation, and is exact.
    const lowering = mb.lowered_after![0]!;
    assert.deepEqual(lowering.failure, {
      stage: 'loader',
      kind: 'every-config-oom',
      param: 'batch_size',
      batch: 200,
      chosen_by: 'max-batch-1',
      configs: 2,
    });
    assert.equal(lowering.batch, 128);
    assert.equal(lowering.lowest_fail, 136);
    const lowers = records.filter((t) => t.role.kind === 'lower');
    assert.deepEqual(
      lowers.map((t) => t.index),
      lowering.trials,
    );
    assert.ok(lowers.every((t) => t.config['num_workers'] === 1 && t.stage === 'max-batch-1'));
    assert.ok(lowers.some((t) => t.config['batch_size'] === 136 && t.outcome === 'oom'));
    // The stage ran again at 128 and chose the config that held there.
    const again = records.filter((t) => t.stage === 'loader' && t.config['batch_size'] === 128);
    assert.equal(again.length, 2);
    assert.deepEqual(result.chosen, { batch_size: 128, num_workers: 1 });
    assert.equal(chosen.config['batch_size'], 128);
    assert.ok(chosen.args?.includes('--batch=128'), JSON.stringify(chosen.args));
    assert.ok(!JSON.stringify(chosen).includes('--batch=200'));
    assert.match(
      notesText(result.stages[1]!.notes),
      /stage loader: every config OOMed at batch 200; max-batch-1 lowered it to 128 \(136 failed\)/,
    );
    assert.deepEqual(result.failed_stages, []);
    assert.equal(result.stage_failures, undefined);
  });

  it('exits 1 naming the stage and the failure when no lower batch holds', { timeout: 60_000 }, async () => {
    const { r, dir, result, chosen, mb } = await run(300);
    assert.equal(r.exitCode, 1, r.all);
    assert.match(r.stderr, /^tunebench: harness failure: stage loader: every config OOMed at batch 200, /m);
    assert.doesNotMatch(r.all ?? '', /invalid input/);
    assert.deepEqual(result.stage_failures, [
      {
        stage: 'loader',
        kind: 'every-config-oom',
        param: 'batch_size',
        batch: 200,
        chosen_by: 'max-batch-1',
        configs: 2,
      },
    ]);
    assert.equal(mb.chosen, null);
    assert.equal(mb.lowered_after![0]!.batch, null);
    // No batch that failed is written anywhere.
    assert.equal(chosen.config['batch_size'], undefined);
    assert.equal(result.chosen['batch_size'], undefined);
    // The script's arguments need a batch_size: without one that held, no .args is written.
    assert.equal(existsSync(join(dir, 'chosen-config.args')), false);
    assert.equal(result.files['chosen_args'], undefined);
    assert.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /## Failed\n\n- stage loader: every config OOMed/);
  });

  it(
    'lowers inside the measured band when a compare cannot run because its baseline OOMed at the batch',
    { timeout: 90_000 },
    async () => {
      // The band measured at 200 (sharp) puts the max at 192; the compare's baseline extra=40 needs 40 more
      // samples, so it OOMs at 192 and the compare chooses nothing. The failure joins the band's runs, the
      // model (its spread now allowed up to 10%) places 168, which fails under extra=40 (208 > 200); fitted
      // again it places 152, which passes 3 runs in a row under the config that failed, and the compare runs
      // again at it.
      const { r, result, chosen, records, mb } = await run(0, {
        repeatBoundary: 2,
        later: '  - { kind: compare, name: cmp, param: extra, arms: [40, 0], baseline: 40, repeats: 2, steps: 2 }',
      });
      assert.equal(r.exitCode, 0, r.all);
      assert.equal(mb.band?.passed_all, 192);
      assert.ok(mb.band?.runs?.length, 'the band keeps the runs it was fitted on');
      const first = records.filter((t) => t.stage === 'cmp' && t.config['batch_size'] === 192);
      assert.ok(first.some((t) => t.config['extra'] === 40 && t.outcome === 'oom'));
      const lowering = mb.lowered_after![0]!;
      assert.deepEqual(lowering.failure, {
        stage: 'cmp',
        kind: 'oom-at-batch',
        param: 'batch_size',
        batch: 192,
        chosen_by: 'max-batch-1',
        configs: 1,
        ran: 2,
      });
      assert.deepEqual(lowering.config, { extra: 40 }, 'the lowering runs the config that failed');
      assert.equal(lowering.batch, 152);
      assert.equal(lowering.lowest_fail, 168);
      assert.equal(lowering.band?.repeats, 2);
      assert.ok(lowering.band?.risk !== undefined && lowering.band.risk <= 0.02);
      const lowers = records.filter((t) => t.role.kind === 'lower');
      assert.deepEqual(
        lowers.map((t) => [t.config['batch_size'], t.outcome]),
        [
          [168, 'oom'],
          [152, 'ok'],
          [152, 'ok'],
          [152, 'ok'],
        ],
      );
      // The compare ran again at 152, where both arms fit, and the batch that failed is written nowhere.
      assert.ok(records.some((t) => t.stage === 'cmp' && t.config['batch_size'] === 152 && t.config['extra'] === 40));
      assert.equal(result.chosen['batch_size'], 152);
      assert.ok('extra' in result.chosen, JSON.stringify(result.chosen));
      assert.equal(chosen.config['batch_size'], 152);
      assert.match(
        notesText(result.stages[1]!.notes),
        /stage cmp: 1 of 2 configs OOMed at batch 192 and the stage chose nothing; max-batch-1 lowered it to 152 \(168 failed; it passed 3 runs in a row, and the band model puts its chance of failing a run at [\d.]+%\)/,
      );
      assert.equal(result.stage_failures, undefined);
    },
  );

  it(
    'lowers the batch and runs the stage again when the config it chose ran out of memory at the batch in one trial',
    { timeout: 90_000 },
    async () => {
      // The compare's 4th trial (the baseline extra=0 in round 2, which the compare keeps) OOMs once, as a run
      // in a band does; its other runs pass. The choice was measured at a batch that failed with it: the batch
      // is lowered inside the band under that config, and the compare runs again at the lowered batch.
      const count = join(tempDir(), 'count');
      const { r, result, records, mb } = await run(0, {
        repeatBoundary: 2,
        later: '  - { kind: compare, name: cmp, param: extra, arms: [0, 8], baseline: 0, repeats: 2, steps: 2 }',
        argv: [`--count=${count}`, '--oom-nth=4'],
      });
      assert.equal(r.exitCode, 0, r.all);
      const oomed = records.filter((t) => t.stage === 'cmp' && t.outcome === 'oom');
      assert.equal(oomed.length, 1);
      assert.deepEqual(oomed[0]!.config, { batch_size: 192, extra: 0 });
      const lowering = mb.lowered_after![0]!;
      const atFirst = records.filter(
        (t) => t.stage === 'cmp' && t.config['batch_size'] === 192 && t.config['extra'] === 0,
      );
      assert.deepEqual(lowering.failure, {
        stage: 'cmp',
        kind: 'chosen-config-oom',
        param: 'batch_size',
        batch: 192,
        chosen_by: 'max-batch-1',
        configs: 1,
        chosen: { extra: 0 },
        trials: { ran: atFirst.length, oom: 1 },
      });
      assert.deepEqual(lowering.config, { extra: 0 });
      const lowered = lowering.batch!;
      assert.ok(lowered < 192 && lowered % 8 === 0, String(lowered));
      assert.deepEqual(
        records.filter((t) => t.role.kind === 'lower').map((t) => [t.config['batch_size'], t.outcome]),
        [
          [lowered, 'ok'],
          [lowered, 'ok'],
          [lowered, 'ok'],
        ],
        'the placed batch passed 3 runs in a row',
      );
      assert.ok(lowering.band!.risk! <= 0.02);
      // The compare ran again at the lowered batch and chose there; that choice is what is written, and the
      // lowering's runs already confirmed it with the final config (no final confirmation run).
      assert.ok(records.some((t) => t.stage === 'cmp' && t.config['batch_size'] === lowered));
      assert.equal(result.stages[1]!.chosen['extra'], 0, 'the compare kept its baseline');
      assert.deepEqual(result.chosen, { batch_size: lowered, extra: 0 });
      assert.equal(records.filter((t) => t.role.kind === 'final-confirm').length, 0);
      assert.match(
        notesText(result.stages[1]!.notes),
        new RegExp(
          `stage cmp: the config it chose \\(extra=0\\) OOMed at batch 192 in 1 of its ${atFirst.length} trials; ` +
            `max-batch-1 lowered it to ${lowered} \\(192 failed; it passed 3 runs in a row`,
        ),
      );
    },
  );
});
