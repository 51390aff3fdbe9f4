// Benchmark: where trial time goes outside the measured work (issue 21's starting point). Runs the
// default job and the torch experiments whole, then splits every trial's wall time into warm-up
// steps, measured steps and the rest (process start, imports, ONNX Runtime or torch set-up, input
// generation, teardown): harness overhead = (trial wall - warm-up - measured steps) / trial wall.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import { createProgress } from '../../harness/cli/progress.js';
import { runExperiment } from '../../harness/engine/run-experiment.js';
import type { TrialRecord } from '../../harness/domain/index.js';
import { ROOT, tempDir } from '../support/paths.js';
import { writeSection } from './results.js';
import { readRunDir } from '../../harness/experiment/run-file.js';

/**
 * Each torch experiment runs twice, side by side: fresh processes (warm_start: off) and forks of a
 * warm server (warm_start: fork). torch-transformer drops its DataLoader sweep (about 10 minutes of
 * the 15 a whole run takes); its other stages run whole.
 */
const EXPERIMENTS: readonly { file: string; modes: readonly ('off' | 'fork' | null)[]; dropStages?: string[] }[] = [
  { file: 'experiments/default.yaml', modes: [null] },
  { file: 'experiments/torch-cnn.yaml', modes: ['off', 'fork'] },
  { file: 'experiments/torch-transformer.yaml', modes: ['off', 'fork'], dropStages: ['dataloader'] },
];

/** The experiment file with warm_start set and stages dropped, written next to the original (its paths are relative). */
function variant(file: string, mode: 'off' | 'fork' | null, dropStages: readonly string[]): string {
  if (mode === null && dropStages.length === 0) return join(ROOT, file);
  const doc = parseDocument(readFileSync(join(ROOT, file), 'utf8'));
  if (mode !== null) doc.setIn(['workload', 'warm_start'], mode);
  const stages = doc.get('stages') as YAMLSeq<YAMLMap>;
  stages.items = stages.items.filter((st) => !dropStages.includes(String(st.get('name'))));
  const out = join(ROOT, dirname(file), `.overhead-${mode ?? 'default'}-${basename(file)}`);
  writeFileSync(out, doc.toString());
  return out;
}

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
  for (const { file, modes, dropStages = [] } of EXPERIMENTS) {
    for (const mode of modes) {
      const label = `\`${file}\`${mode ? ` warm_start: ${mode}` : ''}${dropStages.length ? ` (without ${dropStages.join(', ')})` : ''}`;
      if (file.includes('torch') && !hasTorch) {
        rows.push(`| ${label} | skipped: /usr/bin/python3 has no torch (npm run setup:system) | | | | | |`);
        continue;
      }
      const path = variant(file, mode, dropStages);
      const started = Date.now();
      process.stderr.write(`overhead: running ${label}\n`);
      try {
        const result = await runExperiment({ experimentPath: path, outDir: out, progress: createProgress('quiet') });
        const runSeconds = (Date.now() - started) / 1000;
        const { records } = readRunDir(result.run_dir);
        const all = split(records);
        const ok = split(records.filter((r) => r.outcome === 'ok'));
        const overhead = (s: Split) => pct(s.wall - s.warmup - s.steps, s.wall);
        const forked = records.filter((r) => r.launch === 'fork').length;
        rows.push(
          `| ${label} | ${runSeconds.toFixed(1)} s | ${all.trials}${mode === 'fork' ? ` (${forked} forked)` : ''} | ` +
            `${all.wall.toFixed(1)} s | ${pct(all.warmup, all.wall)} | ${pct(all.steps, all.wall)} | ` +
            `**${overhead(all)}** (ok trials: ${overhead(ok)}) |`,
        );
      } finally {
        if (path !== join(ROOT, file)) rmSync(path, { force: true });
      }
    }
  }
  const doc = [
    '## Harness overhead per trial',
    '',
    `Command: \`npm run bench:overhead\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.versions.node}. ` +
      "Each experiment runs whole (torch-transformer without its DataLoader sweep). A trial's wall " +
      'time splits into warm-up steps, measured steps and the rest: process start, imports, session or model ' +
      'set-up, input generation and teardown. The overhead is that rest over the trial wall time, summed over ' +
      'the trials. Failed probes (OOM) count too: a max-batch search pays for them. Every trial ends at its ' +
      '`done` event (the teardown is not waited for). The torch experiments run twice in a row: fresh processes ' +
      '(`warm_start: off`), then forks of a warm server (`warm_start: fork`).',
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
