// PyTorch end to end with Debian's torch under /usr/bin/python3 (CI installs python3-torch): a small
// experiments/torch-cnn.yaml finds a real CPU-allocator OOM boundary under prlimit, sweeps real
// DataLoader workers, and compares the four empty_cache policies.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, FIXTURES, tempDir } from '../support/paths.js';
import { assertExactMax, journal, runDir } from '../support/runs.js';
import { requireSystem } from '../support/system.js';
import type { CompareSummary, Fingerprint, MaxBatchSummary, SweepSummary } from '../../harness/domain/index.js';

describe('PyTorch workload (torch-cnn, small)', { skip: requireSystem('torch') }, () => {
  it(
    'max-batch to a real DefaultCPUAllocator OOM, a DataLoader sweep, empty_cache compared',
    {
      timeout: 5 * 60_000,
    },
    async () => {
      const out = tempDir();
      const r = await execa(
        process.execPath,
        [CLI, 'run', join(FIXTURES, 'experiments', 'torch-cnn-small.yaml'), '--out', out],
        { reject: false },
      );
      assert.equal(r.exitCode, 0, r.stderr);
      const dir = runDir(out, 'torch-cnn-small');
      const records = journal(dir);
      const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
        result: { stages: { name: string; result: unknown }[]; chosen: Record<string, unknown> };
        environment: Fingerprint;
      };
      // The workload's own stack is in the fingerprint: the interpreter it ran under and its torch.
      assert.equal(run.environment.workload?.interpreter, '/usr/bin/python3');
      assert.match(run.environment.workload?.packages['torch'] ?? '', /^\d+\.\d+/);
      const [mb, sweep, cmp] = run.result.stages.map((s) => s.result) as [
        MaxBatchSummary,
        SweepSummary,
        CompareSummary,
      ];

      // Max batch: exact, and the failing probes are PyTorch's own CPU allocator running out under the cap.
      assert.equal(mb.status, 'exact');
      assertExactMax(records, mb.max!, 64);
      const ooms = records.filter((x) => x.stage === 'max-batch' && x.outcome === 'oom');
      assert.ok(ooms.length > 0);
      for (const o of ooms) {
        assert.match(o.stderr_tail, /DefaultCPUAllocator: can't allocate memory/);
        assert.match(o.reason, /oom event/);
        assert.equal(o.exit_code, 86);
      }

      // The sweep ran real DataLoader worker processes: 1 + num_workers processes in the trial's tree.
      const sweepTrials = records.filter((x) => x.stage === 'dataloader');
      assert.equal(sweepTrials.length, 3);
      assert.ok(
        sweepTrials.every((x) => x.outcome === 'ok' && x.config['batch_size'] === run.result.chosen['batch_size']),
      );
      // Telemetry samples every 200 ms, so one short trial may end between samples that saw its workers:
      // each trial's tree is at most 1 + num_workers, and every config shows all its workers in some trial.
      const seen = new Map<number, number>();
      for (const t of sweepTrials) {
        const workers = Number(t.config['num_workers']);
        const most = t.telemetry.summary.processes?.max ?? 0;
        assert.ok(most <= 1 + workers, `num_workers=${workers}: ${JSON.stringify(t.telemetry.summary.processes)}`);
        seen.set(workers, Math.max(seen.get(workers) ?? 0, most));
        assert.equal('prefetch_factor' in t.config, workers > 0, 'prefetch_factor only where it applies');
        assert.ok(t.steps.every((s) => s.data_wait_seconds !== undefined && s.data_wait_seconds >= 0));
      }
      for (const [workers, most] of seen) assert.equal(most, 1 + workers, `num_workers=${workers}: at most ${most}`);
      assert.equal(sweep.configs.length, 3);
      assert.ok(sweep.chosen_key);

      // empty_cache: four arms in rounds whose order reverses; on CPU the policy never calls empty_cache().
      const arms = records.filter((x) => x.stage === 'empty-cache').map((x) => x.config['empty_cache']);
      const round = ['never', 'every-step', 'every-10', 'on-oom'];
      assert.deepEqual(arms, Array.from({ length: 3 }, (_, r) => (r % 2 === 0 ? round : [...round].reverse())).flat());
      assert.equal(cmp.arms.length, 4);
      for (const arm of cmp.arms) {
        assert.equal(arm.ok_trials, 3);
        assert.ok(arm.throughput && arm.peak_memory);
        assert.deepEqual(arm.empty_cache?.calls, 0);
        if (arm.baseline) continue;
        // The arms run the same code here, but a shared machine can still make one of them measurably
        // slower or faster: the verdict must follow its interval and the noise band, whichever it is.
        const ratio = arm.throughput_ratio!;
        assert.ok(ratio.low < ratio.estimate && ratio.estimate < ratio.high);
        const expected =
          ratio.low > 1 + cmp.noise_band
            ? 'faster'
            : ratio.high < 1 - cmp.noise_band
              ? 'slower'
              : 'no significant difference';
        assert.equal(arm.verdict, expected, `${String(arm.value)}: ${JSON.stringify(ratio)}`);
      }
      assert.equal(
        run.result.chosen['empty_cache'],
        'never',
        'the policies differ in name only, so the baseline is kept whatever was measured',
      );
      assert.match(r.stderr, /differ in name only/);
      const chosen = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
        config: Record<string, unknown>;
      };
      assert.equal(chosen.config['empty_cache'], 'never');
      assert.match(readFileSync(join(dir, 'summary.md'), 'utf8'), /## Stage empty-cache \(compare\)/);
    },
  );
});
