// The whole run's ETA on a real run (issue 44): after the first stage's first three trials, the progress
// line's elapsed time plus its "run ~" estimate is within 2x of the time the run really took.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';

/** "1m30s", "12.5 s", "350.0 ms" (progress.ts's formatSeconds) in seconds. */
function seconds(text: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (m && (m[1] || m[2] || m[3])) return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
  const [v, unit] = text.split(' ');
  return unit === 'ms' ? Number(v) / 1000 : Number(v);
}

describe('the whole-run ETA', () => {
  it("is within 2x of the run's real time after the first stage's third trial", { timeout: 240_000 }, async () => {
    const dir = tempDir('tunebench-eta-');
    try {
      const file = join(dir, 'eta.yaml');
      writeFileSync(
        file,
        `name: eta
workload:
  kind: command
  command: [node, ${join(PROGRAMS, 'simulated-gpu.mjs')}, "--hold-ms=1", "--busy-ms=60"]
  protocol: required
  params: { device: cuda }
limits: { timeout: 30s }
measure: { warmup_steps: 1, steps: 3 }
stages:
  - { kind: max-batch, multiple_of: 8, start: 256, ceiling: 4096, steps: 2, throughput_points: 0, place_by: count }
  - { kind: sweep, strategy: grid, repeats: 2, params: { num_workers: [0, 1, 2], prefetch_factor: [2, 4] } }
`,
      );
      const t0 = Date.now();
      const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs')], {
        reject: false,
        all: true,
      });
      const real = (Date.now() - t0) / 1000;
      assert.equal(r.exitCode, 0, r.all);
      const third = r.all.split('\n').find((l) => /^\[max-batch-1\] trial 3\//.test(l));
      assert.ok(third, r.all);
      const m = /elapsed ([^,]+), (?:eta ~[^,]+, )?run ~(\S+)/.exec(third);
      assert.ok(m, `no whole-run estimate on the third trial's line: ${third}`);
      const predicted = seconds(m[1]!) + seconds(m[2]!);
      const why = `predicted ${predicted.toFixed(1)} s after the third trial, the run took ${real.toFixed(1)} s\n${r.all}`;
      assert.ok(predicted <= 2 * real && predicted >= real / 2, why);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
