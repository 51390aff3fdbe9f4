// Fault injection on storage: a disk that fills up mid-run, a read-only output folder, a damaged
// run.json and a journal from another record format. Each gets a message that names the problem and
// the way out, and what completed is kept. Mounting needs root and mount (test/support/system.ts).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { StoreError } from '../../harness/errors.js';
import { Journal, readJournal } from '../../harness/store/journal.js';
import { CLI, tempDir } from '../support/paths.js';
import { REPORT_FIXTURE, runDir } from '../support/runs.js';
import { commandExperiment, FAULTS_EXPERIMENT, readTrace, trialKey } from '../support/faults.js';
import { requireSystem } from '../support/system.js';

const mounts: string[] = [];

async function mountTmpfs(options: string): Promise<string> {
  const dir = tempDir('tunebench-mnt-');
  await execa('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

after(async () => {
  for (const m of mounts) await execa('umount', [m], { reject: false });
});

const run = (args: string[]) => execa(process.execPath, [CLI, ...args], { reject: false });

describe('storage faults', { timeout: 5 * 60_000 }, () => {
  // Asked inside the suite: under CI=true a missing mount or root fails this suite, not the whole file.
  const skip = requireSystem('tmpfs');
  it(
    'a disk that fills up mid-run stops the harness with a clear message; ' +
      'the journal stays readable and the run resumes once there is space',
    { skip },
    async () => {
      // 1 MiB is what tunebench keeps free; the rest fills up after a dozen trials.
      const disk = await mountTmpfs('size=1060k');
      const r = await run(['run', FAULTS_EXPERIMENT, '--out', disk, '--quiet']);
      assert.equal(r.exitCode, 1, r.stderr);
      assert.match(
        r.stderr,
        /the disk holding .* is full: [\d.]+ KiB free, and tunebench needs 1\.00 MiB to record trial (\d+)/,
      );
      const dir = runDir(disk, 'faults');
      const journal = readJournal(join(dir, 'trials.jsonl'));
      // Whole records only: the failed append was cut back, nothing half-written is left.
      assert.equal(journal.truncatedTail, false);
      assert.deepEqual(journal.badLines, []);
      assert.ok(journal.records.length >= 5, `${journal.records.length} trials fit`);
      assert.deepEqual(
        journal.records.map((x) => x.index),
        journal.records.map((_, i) => i),
      );
      assert.match(
        r.stderr,
        new RegExp(
          `${journal.records.length} completed trial\\(s\\) are safe in .*; ` +
            'fix the cause, then resume with: tunebench run --resume',
        ),
      );
      assert.equal(Number(/to record trial (\d+)/.exec(r.stderr)![1]), journal.records.length);
      // No temporary file of an atomic write is left behind.
      assert.deepEqual((await execa('find', [disk, '-name', '*.tmp'])).stdout, '');
      await execa('mount', ['-o', 'remount,size=24m', disk]);
      const resumed = await run(['run', '--resume', dir, '--quiet']);
      assert.equal(resumed.exitCode, 0, resumed.stderr);
      const trace = readTrace(dir);
      assert.deepEqual(trace.records.slice(0, journal.records.length), journal.records);
      const reference = await run(['run', FAULTS_EXPERIMENT, '--out', tempDir(), '--json']);
      const want = JSON.parse(reference.stdout) as { chosen: Record<string, unknown>; run_dir: string };
      assert.deepEqual(trace.chosen, want.chosen);
      assert.deepEqual(trace.records.map(trialKey), readTrace(want.run_dir).records.map(trialKey));
    },
  );

  it(
    'a workload that fills the disk through its events file is invalid, naming the full disk, not a crash (issue 45)',
    { skip },
    async () => {
      const disk = await mountTmpfs('size=6m');
      const dir = tempDir();
      const program = join(dir, 'flood.mjs');
      writeFileSync(
        program,
        `import { appendFileSync } from 'node:fs';
const junk = 'x'.repeat(64 * 1024) + '\\n';
for (;;) appendFileSync(process.env.TUNEBENCH_EVENTS, junk);
`,
      );
      const experiment = commandExperiment(
        dir,
        'flood',
        ['node', program],
        ['  protocol: required'],
        ['limits: { timeout: 30s }', 'stages:', '  - { kind: sweep, params: { x: [1] }, strategy: grid, repeats: 1 }'],
      );
      const r = await run(['run', experiment, '--out', disk, '--quiet']);
      assert.notEqual(r.exitCode, 0);
      const journal = readJournal(join(runDir(disk, 'flood'), 'trials.jsonl'));
      const record = journal.records[0]!;
      assert.equal(record.outcome, 'invalid', record.reason);
      assert.match(
        record.reason,
        /the disk holding the trial's files filled up while it ran \([\d.]+ \w+ free at its end; its events file had grown to [\d.]+ MiB\)/,
      );
    },
  );

  it('an append that hits a full disk is cut back: the journal never ends in half a record', { skip }, async () => {
    const disk = await mountTmpfs('size=8k');
    const journal = new Journal(join(disk, 'trials.jsonl'));
    const record = { ...readJournal(join(REPORT_FIXTURE, 'trials.jsonl')).records[0]!, index: 0 };
    let appended = 0;
    assert.throws(
      () => {
        for (;;) {
          journal.append({ ...record, index: appended });
          appended += 1;
        }
      },
      (e: Error) =>
        e instanceof StoreError &&
        new RegExp(`could not append trial ${appended} to the journal .*: the disk is full \\(ENOSPC\\)`).test(
          e.message,
        ),
    );
    const read = readJournal(journal.path);
    assert.equal(read.truncatedTail, false);
    assert.deepEqual(read.badLines, []);
    assert.equal(read.records.length, appended);
    assert.ok(appended >= 1);
  });

  it('a read-only output folder is refused before any trial, naming the folder and the fix', { skip }, async () => {
    const ro = await mountTmpfs('ro,size=1m');
    const r = await run(['run', FAULTS_EXPERIMENT, '--out', ro]);
    assert.equal(r.exitCode, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `could not create the run directory ${ro}/faults/\\S+: the file system is read-only \\(EROFS\\); ` +
          'pass --out <dir> somewhere writable',
      ),
    );
  });
});

describe('damaged run directories', { timeout: 2 * 60_000 }, () => {
  /** A stopped run: a finished one with its result removed, as a kill would leave it. */
  async function stoppedRun(): Promise<string> {
    const out = tempDir();
    const r = await run(['run', FAULTS_EXPERIMENT, '--out', out, '--quiet']);
    assert.equal(r.exitCode, 0, r.stderr);
    const dir = runDir(out, 'faults');
    const json = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Record<string, unknown>;
    delete json['result'];
    json['status'] = 'running';
    writeFileSync(join(dir, 'run.json'), JSON.stringify(json));
    return dir;
  }

  it('a corrupted run.json: resume and report say what is damaged and what is intact', async () => {
    const dir = await stoppedRun();
    writeFileSync(join(dir, 'run.json'), readFileSync(join(dir, 'run.json'), 'utf8').slice(0, 200));
    const resumed = await run(['run', '--resume', dir]);
    assert.equal(resumed.exitCode, 2);
    assert.match(
      resumed.stderr,
      new RegExp(
        'cannot resume: .*run\\.json:\\d+: run\\.json is damaged: not valid JSON \\(.+\\); ' +
          'the run directory was damaged after tunebench wrote it, or it is not a tunebench run ' +
          '\\(tunebench writes run\\.json atomically\\); the completed trials in trials\\.jsonl are intact, ' +
          'but the experiment to resume is lost: start a new run from the experiment file',
      ),
    );
    const report = await run(['report', dir]);
    assert.equal(report.exitCode, 2);
    assert.match(
      report.stderr,
      /run\.json:\d+: run\.json is damaged: not valid JSON .*the run directory was damaged after tunebench wrote it/,
    );
  });

  it(
    'a journal from another record format, ' +
      'or a run.json of another run format, is refused with the version it has',
    async () => {
      const dir = await stoppedRun();
      const lines = readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n');
      lines[3] = lines[3]!.replace('{"v":3,', '{"v":4,');
      writeFileSync(join(dir, 'trials.jsonl'), `${lines.join('\n')}\n`);
      const resumed = await run(['run', '--resume', dir]);
      assert.equal(resumed.exitCode, 2);
      assert.match(
        resumed.stderr,
        new RegExp(
          'cannot resume: .*trials\\.jsonl line 4 is a trial record of format 4, and this tunebench reads formats 1, 2 and 3; ' +
            'resume it with the tunebench version that wrote it, or start a new run',
        ),
      );
      const report = await run(['report', dir]);
      assert.equal(report.exitCode, 2);
      assert.match(report.stderr, /trials\.jsonl line 4 is a trial record of format 4/);
      const json = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(dir, 'run.json'), JSON.stringify({ ...json, tunebench_run: 9 }));
      const future = await run(['run', '--resume', dir]);
      assert.equal(future.exitCode, 2);
      assert.match(
        future.stderr,
        /cannot resume: .*run\.json has run format 9, and this tunebench resumes formats 1, 2 and 3/,
      );
    },
  );

  it('resuming something that is not a run directory names what is missing', async () => {
    const empty = tempDir();
    mkdirSync(join(empty, 'x'));
    const r = await run(['run', '--resume', join(empty, 'x')]);
    assert.equal(r.exitCode, 2);
    assert.match(r.stderr, /cannot resume .*: it is not a run directory \(run\.json is missing\)/);
    const both = await run(['run', FAULTS_EXPERIMENT, '--resume', join(empty, 'x')]);
    assert.equal(both.exitCode, 2);
    assert.match(both.stderr, /give either an experiment file or --resume <run-dir>, not both/);
  });
});
