// Fault-injection benchmark: many kill -9 + --resume cycles on a deterministic run, counting trials
// lost and duplicated, plus the malformed-experiment corpus. Writes its section of test/bench/RESULTS.md.
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { badFiles, checkRejected } from '../support/bad-experiments.js';
import { FAULTS_EXPERIMENT, killLoop, readTrace } from '../support/faults.js';
import { join } from 'node:path';
import { CLI, ROOT, tempDir } from '../support/paths.js';
import { runDir } from '../support/runs.js';
import { writeSection } from './results.js';

const KILLS = Number(process.env['BENCH_KILLS'] ?? 50);
/** The attack suites: workloads and files written to misbehave, each a test of what must happen. */
const ATTACK_SUITES = [
  'trial-attacks',
  'paths-attacks',
  'numbers-attacks',
  'validation-attacks',
  'containment-attacks',
  'containment-owner-attacks',
  'containment-root-attacks',
  'record-attacks',
  'report-attacks',
  'input-attacks',
  'history-attacks',
  'storage',
];

interface Attack {
  suite: string;
  name: string;
  ok: boolean;
  seconds: number;
}

/** Runs the attack suites (the shipped tests) and reads each attack's result and duration from TAP. */
async function attacks(): Promise<Attack[]> {
  const out: Attack[] = [];
  for (const suite of ATTACK_SUITES) {
    const file = join(ROOT, 'dist', 'test', 'faults', `${suite}.test.js`);
    const r = await execa(process.execPath, ['--test', '--test-reporter=tap', file], { reject: false });
    const lines = r.stdout.split('\n');
    for (const [i, line] of lines.entries()) {
      // Subtests are indented four spaces; the suite's own line is not an attack.
      const m = /^ {4}(not ok|ok) \d+ - (.*)$/.exec(line);
      if (!m) continue;
      const duration = lines
        .slice(i + 1, i + 6)
        .map((l) => /duration_ms: ([\d.]+)/.exec(l)?.[1])
        .find((d) => d !== undefined);
      out.push({ suite, name: m[2]!, ok: m[1] === 'ok', seconds: Number(duration ?? NaN) / 1000 });
    }
  }
  return out;
}

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
  const attacked = await attacks();
  const minutes = ((Date.now() - started) / 60000).toFixed(1);
  const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
  const spread = [...new Set(loop.trialsAtKill)].length;
  const md = [
    '## Fault injection: kill -9 and resume, malformed inputs',
    '',
    `Command: \`npm run bench:faults\` (${minutes} minutes; BENCH_KILLS=${KILLS}). ` +
      `The run is test/fixtures/experiments/faults.yaml (${reference.records.length} trials: ` +
      'max batch, a 6-config sweep x 2, a 3-arm compare x 4) on a simulated GPU whose memory ' +
      'and step times follow from the config, so an uninterrupted run always chooses the same. ' +
      `Each kill lands at a random time 0.3-1.6 s after the harness started (seeded); the next \`tunebench ` +
      `run --resume\` continues, and a run that finishes is checked against the uninterrupted one.`,
    '',
    '| check | target | measured | |',
    '| --- | --- | --- | --- |',
    `| kills injected (SIGKILL of the harness) | >= 20 | ${loop.kills}, at ${spread} different journal lengths, ` +
      `over ${loop.runs} finished runs and ${loop.resumes} resumes (${loop.staleLocksTakenOver} stale ` +
      `locks taken over; ${loop.beforeRunJson} kills landed before run.json existed, and a new run started) ` +
      `| ${pass(loop.kills >= 20)} |`,
    `| completed trials lost | 0 | ${loop.lost} | ${pass(loop.lost === 0)} |`,
    `| trials duplicated | 0 | ${loop.duplicates} | ${pass(loop.duplicates === 0)} |`,
    `| finished runs whose trials or chosen config differ from the uninterrupted run | 0 | ${loop.mismatches.length} ` +
      `(chosen ${JSON.stringify(reference.chosen)}) | ${pass(loop.mismatches.length === 0)} |`,
    `| malformed experiment files rejected with exit 2 and their field named | 100% | ${rejected}/${files.length} ` +
      `= ${((rejected / files.length) * 100).toFixed(0)}% | ${pass(failures.length === 0 && files.length >= 50)} |`,
    ...(failures.length > 0 || loop.mismatches.length > 0
      ? ['', ...failures.map((f) => `- ${f}`), ...loop.mismatches.map((m) => `- ${m}`)]
      : []),
    '',
    `### Attacks: workloads and files written to misbehave`,
    '',
    `Each row is one test of \`test/faults/{${ATTACK_SUITES.join(',')}}.test.ts\`, run through the shipped code; ` +
      `its name says the attack and what must happen; the time is the test's wall time.`,
    '',
    '| suite | attack and required outcome | time | |',
    '| --- | --- | --- | --- |',
    ...attacked.map(
      (a) =>
        `| ${a.suite} | ${a.name.replace(/\|/g, '\\|')} ` +
        `| ${Number.isFinite(a.seconds) ? `${a.seconds.toFixed(2)} s` : '-'} | ${pass(a.ok)} |`,
    ),
    '',
    `Attacks: ${attacked.filter((a) => a.ok).length} of ${attacked.length} handled as required.`,
  ].join('\n');
  writeSection('faults', md);
  process.stdout.write(`${md}\n`);
}

await main();
