// Benchmark: where trial time goes outside the measured work (issue 21's starting point). Runs the
// default job and the torch experiments whole, then splits every trial's wall time into warm-up
// steps, measured steps and the rest (process start, imports, ONNX Runtime or torch set-up, input
// generation, teardown): harness overhead = (trial wall - warm-up - measured steps) / trial wall.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createProgress } from '../../harness/engine/progress.js';
import { runExperiment } from '../../harness/engine/run-experiment.js';
import { readRunDir } from '../../harness/store/read-run.js';
import type { TrialRecord } from '../../harness/domain/index.js';
import { ROOT, tempDir } from '../support/paths.js';
import { writeSection } from './results.js';

const EXPERIMENTS = ['experiments/default.yaml', 'experiments/torch-cnn.yaml', 'experiments/torch-transformer.yaml'];

interface Split {
  trials: number;
  wall: number;
  warmup: number;
  steps: number;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Trial time split over trials that timed steps (whole-process timed ones have no inside to split). */
function split(records: readonly TrialRecord[]): Split {
  const timed = records.filter((r) => r.timing !== 'process');
  return {
    trials: timed.length,
    wall: sum(timed.map((r) => r.wall_seconds)),
    warmup: sum(timed.map((r) => sum((r.warmup ?? []).map((s) => s.seconds)))),
    steps: sum(timed.map((r) => sum(r.steps.map((s) => s.seconds)))),
  };
}

const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '-');

async function main(): Promise<void> {
  const hasTorch = spawnSync('/usr/bin/python3', ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
  const out = tempDir('tunebench-bench-overhead-');
  const rows: string[] = [];
  for (const file of EXPERIMENTS) {
    if (file.includes('torch') && !hasTorch) {
      rows.push(`| \`${file}\` | skipped: /usr/bin/python3 has no torch (npm run setup:system) | | | | | |`);
      continue;
    }
    const started = Date.now();
    process.stderr.write(`overhead: running ${file}\n`);
    const result = await runExperiment({
      experimentPath: join(ROOT, file),
      outDir: out,
      progress: createProgress('quiet'),
    });
    const runSeconds = (Date.now() - started) / 1000;
    const { records } = readRunDir(result.run_dir);
    const all = split(records);
    const ok = split(records.filter((r) => r.outcome === 'ok'));
    const overhead = (s: Split) => pct(s.wall - s.warmup - s.steps, s.wall);
    rows.push(
      `| \`${file}\` | ${runSeconds.toFixed(1)} s | ${all.trials} | ${all.wall.toFixed(1)} s | ` +
        `${pct(all.warmup, all.wall)} | ${pct(all.steps, all.wall)} | **${overhead(all)}** (ok trials: ${overhead(ok)}) |`,
    );
  }
  const doc = [
    '## Harness overhead per trial',
    '',
    "Command: `npm run bench:overhead`. Each experiment runs whole, with fresh-process trials. A trial's wall " +
      'time splits into warm-up steps, measured steps and the rest: process start, imports, session or model ' +
      'set-up, input generation and teardown. The overhead is that rest over the trial wall time, summed over ' +
      'the trials. Failed probes (OOM) count too: a max-batch search pays for them.',
    '',
    '| experiment | run wall time | trials | trial wall time | warm-up steps | measured steps | overhead |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
  writeSection('overhead', doc);
  process.stdout.write(`${doc}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
