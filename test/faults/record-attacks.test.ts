// Workloads that attack what a trial record keeps (issue 31, items 6 and 7): events after `done`,
// and a million step events. Nothing after a rank's `done` counts, and a finished run stays readable:
// the record keeps bounded per-step detail plus an exact summary of the rest, and the journal line is bounded.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { MAX_STEP_DETAIL, stepCount, type TrialRecord } from '../../harness/domain/index.js';
import { MAX_JOURNAL_LINE, readJournal } from '../../harness/store/journal.js';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { EventReader } from '../../harness/trial/event-reader.js';
import { summarizeEvents } from '../../harness/trial/ranks.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';

async function runOne(mode: string): Promise<{ dir: string; lines: string[]; record: TrialRecord }> {
  const dir = tempDir();
  const experiment = commandExperiment(
    dir,
    mode,
    [process.execPath, join(PROGRAMS, 'after-done.mjs')],
    ['  protocol: required', '  params: { batch_size: 64 }', `  env: { MODE: ${mode} }`],
    [
      'limits: { timeout: 60s }',
      'measure: { warmup_steps: 0, steps: 3 }',
      'stages:',
      '  - kind: sweep',
      '    params: { x: [1] }',
      '    strategy: grid',
      '    repeats: 1',
    ],
  );
  const r = await execa(
    process.execPath,
    [CLI, 'run', experiment, '--out', join(dir, 'reports'), '--quiet', '--json'],
    {
      reject: false,
      timeout: 60_000,
    },
  );
  assert.equal(r.exitCode, 0, r.stderr);
  const runDir = (JSON.parse(r.stdout) as { run_dir: string }).run_dir;
  const lines = readFileSync(join(runDir, 'trials.jsonl'), 'utf8').trim().split('\n');
  return { dir: runDir, lines, record: JSON.parse(lines[0]!) as TrialRecord };
}

describe('what a trial record keeps', { timeout: 120_000 }, () => {
  it('steps, memory and oom events after done are ignored, counted and named in the reason', async () => {
    const { record } = await runOne('after-done');
    assert.equal(record.outcome, 'ok', record.reason);
    assert.equal(stepCount(record.steps), 3);
    assert.ok(Math.abs(record.samples_per_second! - 6400) < 1e-6, String(record.samples_per_second));
    assert.equal(record.workload_report?.['peak_bytes'], 1000);
    assert.match(record.reason, /52 event\(s\) after done ignored/);
  });

  it(
    'a million step events: the record keeps bounded detail and an exact summary, ' +
      'the journal line is bounded, and report reads the run',
    async () => {
      const { dir, lines, record } = await runOne('many-steps');
      assert.equal(record.outcome, 'ok', record.reason);
      const bytes = Buffer.byteLength(lines[0]!);
      assert.ok(bytes < MAX_JOURNAL_LINE, `journal line of ${bytes} bytes`);
      assert.ok(bytes < 2_000_000, `journal line of ${bytes} bytes`);
      assert.ok(record.steps.length <= MAX_STEP_DETAIL + 1, String(record.steps.length));
      assert.equal(stepCount(record.steps), 1_000_000);
      assert.ok(Math.abs(record.samples_per_second! - 6400) < 1e-3, String(record.samples_per_second));
      assert.deepEqual(record.step_seconds, { median: 0.01, p95: 0.01 });
      const report = await execa(process.execPath, [CLI, 'report', dir], { reject: false, timeout: 60_000 });
      assert.equal(report.exitCode, 0, report.stderr);
    },
  );

  it("two ranks: what a rank sends after its own done is ignored, the other rank's steps still count", () => {
    const path = join(tempDir(), 'events.jsonl');
    const ev = (rank: number, e: Record<string, unknown>) => JSON.stringify({ ...e, rank });
    const step = { event: 'step', samples: 8, seconds: 1 };
    const lines = [
      ev(0, step),
      ev(1, step),
      ev(0, { event: 'done' }),
      ev(0, { event: 'step', samples: 1e9, seconds: 1 }),
      ev(0, { event: 'memory', peak_bytes: 1e12 }),
      ev(1, step),
      ev(0, step),
      ev(1, { event: 'memory', peak_bytes: 100 }),
      ev(1, { event: 'done' }),
      ev(1, { event: 'oom', message: 'late' }),
    ];
    writeFileSync(path, `${lines.join('\n')}\n`);
    const reader = new EventReader(path, 2);
    reader.finish();
    const summary = summarizeEvents(reader.events, 2);
    assert.deepEqual(
      summary.steps.map((x) => x.samples),
      [16],
    );
    assert.equal(summary.reportedRss, 100);
    assert.ok(!reader.events.some((e) => e.event === 'oom'));
    assert.match(reader.problem ?? '', /4 event\(s\) after done ignored \(each rank's, after its own done\)/);
  });

  it('200 000 distinct epochs: the count is a lower bound, and the record says so (issue 45)', async () => {
    const dir = tempDir();
    const program = join(dir, 'epochs.mjs');
    writeFileSync(
      program,
      `import { appendFileSync } from 'node:fs';
const lines = [];
for (let i = 0; i < 200000; i++) lines.push(JSON.stringify({ event: 'step', samples: 1, seconds: 0.001, epoch: i }));
lines.push(JSON.stringify({ event: 'done' }));
appendFileSync(process.env.TUNEBENCH_EVENTS, lines.join('\\n') + '\\n');
`,
    );
    const workload = new CommandWorkload({ kind: 'command', command: ['node', program], protocol: 'required' }, dir);
    const r = await runTrial(
      { workload, limits: { mechanism: 'none', timeout: 60 }, scratchDir: join(dir, 'scratch') },
      {
        index: 0,
        stage: 's',
        role: { kind: 'probe' },
        config: { batch_size: 1 },
        measure: { warmupSteps: 0, steps: 200_000 },
      },
    );
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.epochs, 2 * MAX_STEP_DETAIL);
    assert.ok(
      r.notes?.some((n) => /more than 20000 distinct epochs, .*epochs is a lower bound/.test(n)),
      JSON.stringify(r.notes),
    );
  });

  it('a journal line over the bound is a bad line, skipped without building its string', () => {
    const dir = tempDir();
    const path = join(dir, 'trials.jsonl');
    const good = readFileSync(join(PROGRAMS, '..', 'runs', 'report-fixture', 'trials.jsonl'), 'utf8').split('\n')[0]!;
    const huge = `{"v":1,"pad":"${'x'.repeat(MAX_JOURNAL_LINE + 10)}"}`;
    writeFileSync(path, `${good}\n${huge}\n${good}\n`);
    const read = readJournal(path);
    assert.equal(read.records.length, 2);
    assert.deepEqual(read.badLines, [2]);
    assert.match(read.problems.join(' '), /line 2 is longer than the .* bound/);
  });
});
