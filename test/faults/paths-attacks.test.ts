// Run directories turned against their owner (issue "trials that always end", items on paths): a
// `charts` folder that is a link elsewhere, a temporary file planted as a link beside a target, and
// a run_id in run.json that climbs out of the output folder. Nothing may be written or deleted
// outside tunebench's own folders.
import { warningText } from '../../harness/report/warnings.js';
import type { RunWarning } from '../../harness/domain/index.js';
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { writeFileAtomic } from '../../harness/store/atomic.js';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { REPORT_FIXTURE } from '../support/runs.js';

describe('run directories that cannot be turned against their owner', () => {
  it('report refuses a charts folder that is a symbolic link, and deletes nothing where it points', async () => {
    const run = join(tempDir(), 'run');
    cpSync(REPORT_FIXTURE, run, { recursive: true });
    const victim = join(tempDir(), 'victim');
    mkdirSync(victim);
    writeFileSync(join(victim, 'precious.svg'), '<svg/>');
    writeFileSync(join(victim, 'precious.vl.json'), '{}');
    rmSync(join(run, 'charts'), { recursive: true, force: true });
    symlinkSync(victim, join(run, 'charts'));
    const r = await execa(process.execPath, [CLI, 'report', run], { reject: false });
    assert.notEqual(r.exitCode, 0);
    assert.match(r.stderr, /refusing to write into .*charts: it is a symbolic link \(to .*victim\)/);
    assert.deepEqual(readdirSync(victim).sort(), ['precious.svg', 'precious.vl.json']);
  });

  it('an atomic write never follows a link planted where its temporary file would go', () => {
    const dir = tempDir();
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'keep me');
    const target = join(dir, 'summary.md');
    // The name the previous version used for its temporary file.
    symlinkSync(victim, `${target}.${process.pid}.tmp`);
    writeFileAtomic(target, 'the summary');
    assert.equal(readFileSync(victim, 'utf8'), 'keep me');
    assert.equal(readFileSync(target, 'utf8'), 'the summary');
  });

  it('compare without --out keeps a run_id that climbs out (x/../../..) inside reports/compare/', async () => {
    const cwd = tempDir();
    const before = join(cwd, 'before');
    const after = join(cwd, 'after');
    for (const [dir, id] of [
      [before, '../../../escaped-before'],
      [after, 'x/../../../../escaped-after'],
    ] as const) {
      cpSync(REPORT_FIXTURE, dir, { recursive: true });
      const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { run_id: string };
      run.run_id = id;
      writeFileSync(join(dir, 'run.json'), JSON.stringify(run));
    }
    const r = await execa(process.execPath, [CLI, 'compare', before, after], { reject: false, cwd });
    assert.equal(r.exitCode, 0, r.stderr);
    const made = readdirSync(join(cwd, 'reports', 'compare'));
    assert.equal(made.length, 1);
    assert.ok(!made[0]!.includes('/') && !made[0]!.startsWith('.'), made[0]);
    assert.ok(existsSync(join(cwd, 'reports', 'compare', made[0]!, 'compare.html')));
    assert.deepEqual(readdirSync(cwd).sort(), ['after', 'before', 'reports']);
  });

  it(
    'a journal deleted mid-run is restored from memory, ' + 'the run says so, and report flags a journal with gaps',
    async () => {
      const dir = tempDir();
      const experiment = commandExperiment(
        dir,
        'deletes',
        [process.execPath, join(PROGRAMS, 'deletes-journal.mjs')],
        ['  protocol: required', '  params: { batch_size: 8 }'],
        [
          'measure: { warmup_steps: 0, steps: 3 }',
          'stages:',
          '  - kind: sweep',
          '    params: { x: [1, 2, 3, 4] }',
          '    strategy: grid',
          '    repeats: 1',
        ],
      );
      const r = await execa(
        process.execPath,
        [CLI, 'run', experiment, '--out', join(dir, 'reports'), '--quiet', '--json'],
        { reject: false },
      );
      assert.equal(r.exitCode, 0, r.stderr);
      const parsed = JSON.parse(r.stdout) as { warnings: RunWarning[]; run_dir: string };
      const result = { ...parsed, warnings: parsed.warnings.map(warningText) };
      assert.ok(
        result.warnings.some((w) =>
          new RegExp(
            'the journal .*trials\\.jsonl was deleted before trial 2 was recorded; ' +
              'tunebench restored its 2 record\\(s\\) from memory',
          ).test(w),
        ),
        JSON.stringify(result.warnings),
      );
      const lines = readFileSync(join(result.run_dir, 'trials.jsonl'), 'utf8').trim().split('\n');
      assert.deepEqual(
        lines.map((l) => (JSON.parse(l) as { index: number }).index),
        [0, 1, 2, 3],
      );
      // A journal with a trial missing: report rebuilds what it can and says that trials are missing.
      writeFileSync(join(result.run_dir, 'trials.jsonl'), `${[lines[0], lines[2], lines[3]].join('\n')}\n`);
      const rep = await execa(process.execPath, [CLI, 'report', result.run_dir], { reject: false });
      assert.match(rep.stderr, /the trial indices jump from 0 to 2 at line 2: trials are missing/);
    },
  );

  it('report --out writes the run files beside links planted in the folder, never through them (issue 45)', async () => {
    const run = join(tempDir(), 'run');
    cpSync(REPORT_FIXTURE, run, { recursive: true });
    const out = tempDir();
    const victims = tempDir();
    const names = ['run.json', 'trials.jsonl', 'chosen-config.json', 'chosen-config.env', 'chosen-config.yaml'];
    for (const name of names) {
      writeFileSync(join(victims, name), 'precious');
      symlinkSync(join(victims, name), join(out, name));
    }
    const r = await execa(process.execPath, [CLI, 'report', run, '--out', out], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    for (const name of names) {
      assert.equal(readFileSync(join(victims, name), 'utf8'), 'precious', `${name} was written through its link`);
      if (existsSync(join(run, name)))
        assert.equal(lstatSync(join(out, name)).isSymbolicLink(), false, `${name} is the run's own file now`);
    }
  });

  it('--resume refuses a .scratch that was replaced by a link, and makes nothing where it points (issue 45)', async () => {
    const dir = tempDir();
    const experiment = commandExperiment(
      dir,
      'scratch',
      ['node', join(PROGRAMS, 'simulated-gpu.mjs'), '--hold-ms=1'],
      ['  protocol: required'],
      ['stages:', '  - { kind: sweep, params: { x: [1, 2] }, strategy: grid, repeats: 1 }'],
    );
    const out = join(dir, 'runs');
    const first = await execa(process.execPath, [CLI, 'run', experiment, '--out', out, '--json'], { reject: false });
    const runDirPath = (JSON.parse(first.stdout) as { run_dir: string }).run_dir;
    const victim = tempDir();
    rmSync(join(runDirPath, '.scratch'), { recursive: true, force: true });
    symlinkSync(victim, join(runDirPath, '.scratch'));
    const r = await execa(process.execPath, [CLI, 'run', '--resume', runDirPath], { reject: false });
    assert.notEqual(r.exitCode, 0);
    assert.match(r.stderr, /\.scratch is a symbolic link \(to .*\): the trials' files are written there/);
    assert.deepEqual(readdirSync(victim), []);
    assert.equal(existsSync(join(runDirPath, '.lock')), false, 'the lock is released');
  });
});
