// History benchmark: `tunebench history` on 1,000 synthetic nights (copies of a real run with a
// planted 15% regression at night 700 and +/-3% noise). Target: under 5 s. Writes its RESULTS.md section.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, tempDir } from '../support/paths.js';
import { plantedNights, writeNights } from '../support/history.js';
import { writeSection } from './results.js';

const NIGHTS = 1000;

async function timed(args: string[]): Promise<{ seconds: number; stdout: string }> {
  const t0 = process.hrtime.bigint();
  const r = await execa(process.execPath, [CLI, ...args], { reject: false });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  assert.equal(r.exitCode, 0, r.stderr);
  return { seconds, stdout: r.stdout };
}

async function main(): Promise<void> {
  const out = tempDir();
  writeNights(out, plantedNights(NIGHTS, { at: 699, step: 0.85, noise: 0.03, seed: 1000 }));
  const cold = await timed(['history', out, '--json']);
  const warm = await timed(['history', out, '--json']);
  // Without the index cache again, to separate reading 1,000 run.json files from the analysis.
  rmSync(join(out, '.history-index.json'));
  const cold2 = await timed(['history', out, '--json']);
  const h = (JSON.parse(warm.stdout) as { experiments: { runs: number; metrics: { name: string }[]; change_points: { metric: string; index: number }[] }[] }).experiments[0]!;
  // Every series: the throughput ones carry the planted step, the max batch must stay unmarked.
  const marks = h.change_points.map((c) => c.index + 1);
  const throughputSeries = h.metrics.filter((m) => m.name.includes('samples/s')).length;
  const hit = marks.filter((n) => Math.abs(n - 700) <= 1).length;
  const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
  const md = [
    '## History: 1,000 runs',
    '',
    `Command: \`npm run bench:history\`. ${NIGHTS} finished runs of the report fixture (max batch, sweep, compare) under one reports folder, a planted 15% regression from night 700 and uniform +/-3% noise; \`tunebench history <dir> --json\` reads every run, fits ${h.metrics.length} series, renders the trend chart (Vega-Lite to SVG) and writes history.html/md/json. Wall time of the whole command, Node start included.`,
    '',
    '| check | target | measured | |',
    '| --- | --- | --- | --- |',
    `| history of 1,000 runs, no index cache | < 5 s | ${cold.seconds.toFixed(2)} s (again after deleting the cache: ${cold2.seconds.toFixed(2)} s) | ${pass(Math.max(cold.seconds, cold2.seconds) < 5)} |`,
    `| history of 1,000 runs, index cached | < 5 s | ${warm.seconds.toFixed(2)} s | ${pass(warm.seconds < 5)} |`,
    `| change points on all ${h.metrics.length} series (${throughputSeries} throughput series carry the planted step) | one per throughput series at night 700 +/- 1, none elsewhere | ${hit} at night 700 +/- 1, ${marks.length - hit} elsewhere (${marks.join(', ') || 'none'}) | ${pass(hit === throughputSeries && hit === marks.length)} |`,
  ].join('\n');
  writeSection('history', md);
  process.stdout.write(`${md}\n`);
}

await main();
