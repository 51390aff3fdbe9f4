// The max-batch stage on the recorded H200, replayed at a tenth of real time (test/support/h200-replay.ts):
// the in-process bracket, then the confirmation and the failure in processes of their own, and the
// harness's own share of every trial's timeline within its budget.
import { roleText } from '../../harness/domain/index.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLI, tempDir } from '../support/paths.js';
import { bent, h200Replay, H200_SMI_ENV, replayExperiment } from '../support/h200-replay.js';
import type { TrialRecord } from '../../harness/domain/index.js';

/** The harness's own seconds per trial (launch + cleanup after the exit), and what no phase explains. */
const HARNESS_BUDGET_S = 0.25;
const UNACCOUNTED_BUDGET_S = 0.25;
const SCALE = 0.1;

function run(spec: ReturnType<typeof h200Replay>['spec']) {
  const dir = tempDir('tunebench-gpu-replay-test-');
  const file = replayExperiment({ dir, spec, scale: SCALE });
  const p = spawnSync(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs'), '--json'], {
    env: { ...process.env, ...H200_SMI_ENV },
    encoding: 'utf8',
  });
  assert.equal(p.status, 0, p.stderr);
  const out = JSON.parse(p.stdout) as {
    run_dir: string;
    wall_seconds: number;
    stages: { result: { max: number; smallestFail: number; confirmed: boolean; log: string[] } }[];
  };
  const trials = readFileSync(join(out.run_dir, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TrialRecord);
  return { result: out.stages[0]!.result, trials, stderr: p.stderr, wall: out.wall_seconds };
}

/** "5.4 s", "353.7 ms", "2m19s" as the progress line prints them, in seconds. */
function seconds(text: string): number {
  const m = /^(?:(\d+)m)?([\d.]+)\s*(ms|s)?$/.exec(text.trim());
  assert.ok(m, `a duration: ${text}`);
  return Number(m[1] ?? 0) * 60 + Number(m[2]) / (m[3] === 'ms' ? 1000 : 1);
}

describe('max-batch on the replayed H200', () => {
  it('writes the recorded max, confirmed in a fork that never touched the device, after an in-process bracket', () => {
    const r = h200Replay();
    const { result, trials, stderr, wall } = run(r.spec);
    assert.equal(result.max, r.max);
    assert.equal(result.smallestFail, r.smallestFail);
    assert.equal(result.confirmed, true);
    assert.match(result.log[0]!, /search: in-process .*card's memory/);
    const [bracket, ...fresh] = trials;
    assert.equal(bracket!.role.kind, 'bracket');
    assert.ok((bracket!.attempts?.length ?? 0) >= 4 && bracket!.attempts!.length <= 10, `${bracket!.attempts?.length}`);
    assert.deepEqual(
      fresh.map((t) => `${roleText(t.role)} ${t.config['batch_size']} ${t.outcome} ${t.launch ?? 'fresh'}`),
      [`confirm ${r.max} ok fork`, `probe ${r.smallestFail} oom fork`],
    );
    for (const t of trials) {
      assert.ok(t.timeline, `trial ${t.index} has a timeline`);
      assert.ok(t.timeline.harness <= HARNESS_BUDGET_S, `trial ${t.index}: the harness took ${t.timeline.harness} s`);
      if (t.role.kind !== 'bracket' && t.outcome === 'ok')
        assert.ok(t.timeline.unaccounted <= UNACCOUNTED_BUDGET_S, `trial ${t.index}: ${JSON.stringify(t.timeline)}`);
    }
    // The first ETA the stage prints puts its end within 1.5x of when it ended.
    const first = /elapsed (\S+ ?m?s), eta ~(\S+ ?m?s)/.exec(stderr);
    assert.ok(first, stderr);
    const predicted = seconds(first[1]!) + seconds(first[2]!);
    assert.ok(predicted / wall < 1.5 && wall / predicted < 1.5, `predicted ${predicted} s, ran ${wall} s`);
    // The replay's per-process cost is where the records put it: before the first step, once per process.
    const confirm = fresh[0]!.timeline!;
    assert.ok(Math.abs(confirm.build! - r.spec.process_seconds * SCALE) < 0.15, JSON.stringify(confirm));
  });

  it('on memory that bends upward writes no max above its own boundary', () => {
    const b = bent(h200Replay());
    const { result } = run(b.spec);
    assert.ok(result.max <= b.max && result.max > b.max - 8, `${result.max} for a true max of ${b.max}`);
    assert.equal(result.smallestFail, result.max + 8);
    assert.equal(result.confirmed, true);
  });
});
