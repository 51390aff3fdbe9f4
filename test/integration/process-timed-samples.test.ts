// A workload that reports no steps is timed as a whole process, and its one step counts the value of the
// run's batch parameter as its samples (the max-batch stage's `param`, such as micro_batch), not
// batch_size whatever the stage searched.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, ROOT, tempDir } from '../support/paths.js';
import { readRunDir } from '../../harness/experiment/run-file.js';

const workload = new CommandWorkload({ kind: 'command', command: ['/bin/sh', '-c', 'exit 0'] }, ROOT);

async function samplesOf(config: Record<string, number>, samplesParam?: string): Promise<number> {
  const ctx: TrialContext = {
    workload,
    limits: { mechanism: 'auto', timeout: 30 },
    scratchDir: tempDir(),
    ...(samplesParam ? { samplesParam } : {}),
  };
  const r = await runTrial(ctx, {
    index: 0,
    stage: 's',
    role: { kind: 'probe' },
    config,
    measure: { warmupSteps: 0, steps: 1 },
  });
  assert.equal(r.outcome, 'ok', r.reason);
  assert.equal(r.steps.length, 1, 'a whole-process run is one step');
  return r.steps[0]!.samples;
}

describe('a trial timed as a whole process', () => {
  it("counts the run's batch parameter as its samples", async () => {
    assert.equal(await samplesOf({ micro_batch: 48, batch_size: 16 }, 'micro_batch'), 48);
    // Without a batch parameter named, batch_size; without either, one sample per run.
    assert.equal(await samplesOf({ micro_batch: 48, batch_size: 16 }), 16);
    assert.equal(await samplesOf({ micro_batch: 48 }), 1);
  });

  it("is counted in a run by the max-batch stage's param", async () => {
    const dir = tempDir();
    const file = join(dir, 'e.yaml');
    writeFileSync(
      file,
      `name: process-timed
workload: { kind: command, command: [/bin/sh, -c, "exit 0"] }
limits: { memory: 1GiB, timeout: 30s }
measure: { warmup_steps: 0, steps: 1 }
stages:
  - { kind: max-batch, param: micro_batch, multiple_of: 8, ceiling: 32, steps: 1, confirm_steps: 0, throughput_points: 0, repeat_boundary: 0, choose: max }
`,
    );
    const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs'), '--quiet'], {
      reject: false,
    });
    assert.equal(r.exitCode, 0, r.stderr);
    const { records } = readRunDir(/run directory: (\S+)/.exec(r.stdout)![1]!);
    assert.ok(records.length >= 2);
    for (const t of records)
      assert.deepEqual(
        t.steps.map((s) => s.samples),
        [t.config['micro_batch']],
      );
  });
});
