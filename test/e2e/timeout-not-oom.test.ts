// A timeout is not an OOM: a run at the true max that stalls once (a busy machine) leaves the max
// written where it is, and the report says the timeout was left out (principle 11, issue 44).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, tempDir } from '../support/paths.js';
import { simulatedGpuHead } from '../support/simulated-gpu.js';
import { notesText } from '../support/notes.js';
import type { StageNote } from '../../harness/domain/index.js';

/** simulated-gpu.mjs: 40 MiB a sample of 16 GiB, so 408 runs and 416 fails (multiples of 8). */
function experiment(dir: string, stage: string, stall = ['--stall-at=408', '--stall-runs=1']): string {
  const file = join(dir, 'stall.yaml');
  writeFileSync(
    file,
    `${simulatedGpuHead('stall', ['--hold-ms=1', `--stall-dir=${dir}`, ...stall], '5s')}  - kind: max-batch
    multiple_of: 8
    start: 256
    ceiling: 4096
    steps: 2
    throughput_points: 0
    place_by: count
    choose: max
${stage}`,
  );
  return file;
}

/** The stage's answer and notes of one run of the experiment. */
async function answer(file: string, dir: string) {
  const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs'), '--json'], { reject: false });
  assert.equal(r.exitCode, 0, r.stderr);
  const out = JSON.parse(r.stdout) as {
    run_dir: string;
    stages: { notes: StageNote[]; result: { max: number; smallestFail: number; status: string } }[];
  };
  return { ...out.stages[0]!, runDir: out.run_dir };
}

describe('a timeout is not evidence about memory', () => {
  it('a probe at the true max that stalls once leaves the max at 408, and says so', async () => {
    const dir = tempDir('tunebench-stall-');
    const stage = await answer(experiment(dir, '    confirm_steps: 0\n    repeat_boundary: 0\n'), dir);
    assert.equal(stage.result.max, 408, JSON.stringify(stage.notes));
    assert.equal(stage.result.smallestFail, 416);
    assert.equal(stage.result.status, 'exact');
    assert.ok(
      stage.notes.some((n) => n.kind === 'timed-out-rerun' && n.batch === 408 && n.role === 'probe'),
      notesText(stage.notes),
    );
    const trials = readFileSync(join(stage.runDir, 'trials.jsonl'), 'utf8').trim().split('\n');
    assert.ok(
      trials.some((l) => /"outcome":"timeout"/.test(l)),
      'the stalled run is in the journal',
    );
    assert.match(readFileSync(join(stage.runDir, 'summary.md'), 'utf8'), /408 timed out/);
  });

  it('a boundary repeat that stalls is left out of the band: the max written is the one without the stall', async () => {
    const stage = '    confirm_steps: 2\n    repeat_boundary: 1\n';
    const clean = tempDir('tunebench-stall-');
    const reference = await answer(experiment(clean, stage, ['--stall-at=999999']), clean);
    // The runs at 408: the probe, the confirmation, then the repeat, which stalls.
    const dir = tempDir('tunebench-stall-');
    const stalled = await answer(experiment(dir, stage, ['--stall-at=408', '--stall-runs=3']), dir);
    assert.equal(stalled.result.max, reference.result.max, JSON.stringify(stalled.notes));
    assert.equal(stalled.result.smallestFail, reference.result.smallestFail);
    assert.ok(
      stalled.notes.some((n) => n.kind === 'repeat-timed-out' && n.batch === 408),
      notesText(stalled.notes),
    );
  });

  it('stops, rather than lower the max, when the same batch times out twice', async () => {
    const dir = tempDir('tunebench-stall-');
    const file = experiment(dir, '    confirm_steps: 0\n    repeat_boundary: 0\n', [
      '--stall-at=408',
      '--stall-runs=1-99',
    ]);
    const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs'), '--json'], {
      reject: false,
    });
    assert.match(r.stdout + r.stderr, /408 timed out twice in a row.*raise limits\.timeout/s);
    const out = JSON.parse(r.stdout) as { stages: { result: { status: string; max: number | null } }[] };
    assert.equal(out.stages[0]!.result.status, 'failed');
    // No answer is written below a batch that was never measured.
    assert.equal(out.stages[0]!.result.max, null);
    assert.equal(r.exitCode, 2);
  });
});
