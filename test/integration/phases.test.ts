// The phases of training inside trials, with real torch: the eval loop and the checkpoint save that a
// script registers with timer.on_epoch_end run at each epoch boundary of a confirmation-length trial,
// and a trial that runs out of memory in one of them says which, with the full traceback.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import type { MeasureSteps } from '../../harness/workloads/workload.js';
import type { Config } from '../../harness/domain/index.js';
import type { Experiment } from '../../harness/experiment/schema.js';
import { ROOT, tempDir } from '../support/paths.js';
import { requireSystem } from '../support/system.js';

const SCRIPT = join(ROOT, 'test', 'fixtures', 'programs', 'phases_train.py');
const workload = () =>
  new CommandWorkload({ kind: 'command', command: [SCRIPT], python: '/usr/bin/python3', protocol: 'required' }, ROOT);

function trial(
  config: Config,
  limits: Experiment['limits'],
  measure: MeasureSteps = { warmupSteps: 1, steps: 29, epochs: 3 },
) {
  return runTrial(
    { workload: workload(), limits, scratchDir: tempDir() },
    { index: 0, stage: 's', role: { kind: 'confirm' }, config: { batch_size: 16, ...config }, measure },
  );
}

describe('phases of training inside trials (real torch)', { skip: requireSystem('torch') }, () => {
  it(
    'a confirmation-length trial runs eval and save at each epoch boundary and at its end',
    { timeout: 60_000 },
    async () => {
      // 30 batches in 3 epochs of 10 (the loader has 12: each epoch ends after its share).
      const r = await trial({}, { mechanism: 'none', timeout: 60 });
      assert.equal(r.outcome, 'ok', `${r.reason}\n${r.stderr_tail}`);
      assert.equal(r.epochs, 3);
      assert.deepEqual(
        r.phases!.map((p) => `${p.phase}@${p.epoch}`),
        ['eval@0', 'checkpoint@0', 'eval@1', 'checkpoint@1', 'eval@2', 'checkpoint@2'],
      );
      for (const p of r.phases!) {
        assert.ok(p.seconds > 0 && p.seconds < 30, `${p.phase}: ${p.seconds} s`);
        assert.ok(p.peak_bytes! > 50 * 2 ** 20, `${p.phase}: a torch process holds more than 50 MiB`);
      }
      assert.equal(r.failed_in, undefined);
    },
  );

  it(
    'an OOM in eval at an epoch boundary is recorded with its phase and the full traceback',
    { timeout: 60_000 },
    async () => {
      // prlimit: the 4 GiB allocation fails inside Python, as a CUDA OOM does on a GPU.
      const r = await trial(
        { fail_in: 'eval', fail_epoch: 1 },
        { mechanism: 'prlimit', memory: 1.5 * 2 ** 30, timeout: 60 },
      );
      assert.equal(r.outcome, 'oom', `${r.reason}\n${r.stderr_tail}`);
      assert.deepEqual(r.failed_in, { phase: 'eval', epoch: 1, step: 20, source: 'event' });
      assert.deepEqual(
        r.phases!.map((p) => `${p.phase}@${p.epoch}`),
        ['eval@0', 'checkpoint@0'],
        'epoch 0 ended whole; epoch 1 failed in eval',
      );
      assert.match(r.stderr_tail, /tunebench: out of memory in eval \(epoch 1, after 20 steps\); the traceback:/);
      assert.match(r.stderr_tail, /Traceback \(most recent call last\):/);
      assert.match(r.stderr_tail, /in evaluate\n\s+too_much\("eval", epoch\)/, 'the frames of the eval loop');
      assert.match(r.stderr_tail, /in too_much\n\s+return torch\.ones/);
      assert.match(r.stderr_tail, /RuntimeError: .*DefaultCPUAllocator: can't allocate memory/);
    },
  );

  it(
    "a run judged on the workload's own memory readings carries the cgroup's peak of the tree, the cap's measure",
    { timeout: 60_000, skip: requireSystem('cgroup') },
    async () => {
      const plateau = { min_steps: 2, window: 10, tolerance: 0.01 };
      const r = await trial(
        {},
        { mechanism: 'cgroup', memory: 2 ** 31, timeout: 60 },
        { warmupSteps: 1, steps: 29, epochs: 3, plateau },
      );
      assert.equal(r.outcome, 'ok', `${r.reason}\n${r.stderr_tail}`);
      const g = r.memory_growth!;
      assert.equal(g.verdict, 'plateau');
      assert.equal(g.verdict === 'plateau' && g.source, 'workload', 'judged on the StepTimer readings');
      assert.ok(r.peak_limited_bytes! > 0);
      assert.equal(g.verdict === 'plateau' && g.cap_peak_bytes, r.peak_limited_bytes);
    },
  );

  it(
    'a checkpoint save killed by the OOM killer is placed in the phase it never finished',
    { timeout: 60_000, skip: requireSystem('cgroup') },
    async () => {
      // The cgroup's cap: the kernel kills the process, which has no time to say anything.
      const r = await trial(
        { fail_in: 'checkpoint', fail_epoch: 0, fail_gib: 2 },
        { mechanism: 'cgroup', memory: 2 ** 30, timeout: 60 },
      );
      assert.equal(r.outcome, 'oom', `${r.reason}\n${r.stderr_tail}`);
      assert.deepEqual(r.failed_in, { phase: 'checkpoint', epoch: 0, step: 10, source: 'open-phase' });
      assert.deepEqual(
        r.phases!.map((p) => `${p.phase}@${p.epoch}`),
        ['eval@0'],
      );
    },
  );
});
