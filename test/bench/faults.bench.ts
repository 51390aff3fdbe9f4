// Fault-injection benchmark: many kill -9 + --resume cycles on a deterministic run, counting trials
// lost and duplicated, plus the malformed-experiment corpus. Writes its section of test/bench/RESULTS.md.
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { badFiles, checkRejected } from '../support/bad-experiments.js';
import { FAULTS_EXPERIMENT, killLoop, readTrace } from '../support/faults.js';
import { CLI, tempDir } from '../support/paths.js';
import { runDir } from '../support/runs.js';
import { writeSection } from './results.js';

const KILLS = Number(process.env['BENCH_KILLS'] ?? 50);

async function main(): Promise<void> {
  const started = Date.now();
  const out = tempDir();
  const r = await execa(process.execPath, [CLI, 'run', FAULTS_EXPERIMENT, '--out', out, '--quiet'], { reject: false });
  assert.equal(r.exitCode, 0, r.stderr);
  const reference = readTrace(runDir(out, 'faults'));
  const loop = await killLoop({ out: tempDir(), reference, kills: KILLS, seed: 1123 });
  const files = badFiles();
  const failures: string[] = [];
  for (const f of files) {
    const why = await checkRejected(f);
    if (why) failures.push(`${f}: ${why}`);
  }
  const rejected = files.length - failures.length;
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
  const spread = [...new Set(loop.trialsAtKill)].length;
  const md = [
    '## Fault injection: kill -9 and resume, malformed inputs',
    '',
    `Command: \`npm run bench:faults\` (${minutes} minutes; BENCH_KILLS=${KILLS}). The run is test/fixtures/experiments/faults.yaml (${reference.records.length} trials: max batch, a 6-config sweep x 2, a 3-arm compare x 4) on a simulated GPU whose memory and step times follow from the config, so an uninterrupted run always chooses the same. Each kill lands at a random time 0.3-1.6 s after the harness started (seeded); the next \`tunebench run --resume\` continues, and a run that finishes is checked against the uninterrupted one.`,
    '',
    '| check | target | measured | |',
    '| --- | --- | --- | --- |',
    `| kills injected (SIGKILL of the harness) | >= 20 | ${loop.kills}, at ${spread} different journal lengths, over ${loop.runs} finished runs and ${loop.resumes} resumes (${loop.staleLocksTakenOver} stale locks taken over; ${loop.beforeRunJson} kills landed before run.json existed, and a new run started) | ${pass(loop.kills >= 20)} |`,
    `| completed trials lost | 0 | ${loop.lost} | ${pass(loop.lost === 0)} |`,
    `| trials duplicated | 0 | ${loop.duplicates} | ${pass(loop.duplicates === 0)} |`,
    `| finished runs whose trials or chosen config differ from the uninterrupted run | 0 | ${loop.mismatches.length} (chosen ${JSON.stringify(reference.chosen)}) | ${pass(loop.mismatches.length === 0)} |`,
    `| malformed experiment files rejected with exit 2 and their field named | 100% | ${rejected}/${files.length} = ${((rejected / files.length) * 100).toFixed(0)}% | ${pass(failures.length === 0 && files.length >= 50)} |`,
    ...(failures.length > 0 || loop.mismatches.length > 0 ? ['', ...failures.map((f) => `- ${f}`), ...loop.mismatches.map((m) => `- ${m}`)] : []),
  ].join('\n');
  writeSection('faults', md);
  process.stdout.write(`${md}\n`);
}

await main();
