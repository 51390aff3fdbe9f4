// Fault injection: kill -9 the harness at random points of a real run, resume each time, and check
// that no completed trial is lost or duplicated and that the chosen config equals an uninterrupted run's.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { execa } from 'execa';
import { procStart } from '../../harness/store/lock.js';
import { CLI, tempDir } from '../support/paths.js';
import { runDir } from '../support/runs.js';
import { waitFor, waitForTrials } from '../support/wait.js';
import { FAULTS_EXPERIMENT, killLoop, readTrace, trialKey, type Trace } from '../support/faults.js';

describe('kill -9 and --resume', { timeout: 10 * 60_000 }, () => {
  let reference: Trace;
  /** The uninterrupted run's directory: only the last test writes in it (a finished run to refuse). */
  let finished = '';
  before(async () => {
    const out = tempDir();
    const r = await execa(process.execPath, [CLI, 'run', FAULTS_EXPERIMENT, '--out', out, '--quiet'], {
      reject: false,
    });
    assert.equal(r.exitCode, 0, r.stderr);
    finished = runDir(out, 'faults');
    reference = readTrace(finished);
    assert.ok(reference.records.length >= 30, `the reference run has ${reference.records.length} trials`);
  });

  it(
    '20 kills at random points lose and duplicate nothing, ' + 'and every run chooses what the uninterrupted run chose',
    async () => {
      const result = await killLoop({ out: tempDir(), reference, kills: 20, seed: 20261123 });
      assert.ok(result.kills >= 20);
      assert.equal(result.lost, 0, 'completed trials lost');
      assert.equal(result.duplicates, 0, 'trials duplicated');
      assert.deepEqual(result.mismatches, []);
      assert.ok(result.runs >= 1);
      // Every resume after a kill found the dead process's lock and took it over.
      assert.ok(
        result.resumes >= result.kills / 2,
        `${result.resumes} resumes for ${result.kills} kills (trials at each kill: ${result.trialsAtKill.join(' ')})`,
      );
      assert.ok(
        result.staleLocksTakenOver >= result.resumes / 2,
        `${result.staleLocksTakenOver} lock takeovers in ${result.resumes} resumes`,
      );
      // The kills landed all over the run, not only at its start.
      assert.ok(new Set(result.trialsAtKill).size >= 8, `trials at each kill: ${result.trialsAtKill.join(' ')}`);
    },
  );

  it('a journal line cut short by a kill is dropped with a message, and that trial runs again', async () => {
    const out = tempDir();
    const child = execa(process.execPath, [CLI, 'run', FAULTS_EXPERIMENT, '--out', out, '--quiet'], { reject: false });
    // Kill once the journal holds a few trials, then cut its last line in half, as a kill mid-write would.
    const dir = await waitForTrials(out, 'faults', 8);
    child.kill('SIGKILL');
    await child;
    const path = join(dir, 'trials.jsonl');
    const text = readFileSync(path, 'utf8');
    const whole = text.trimEnd().split('\n');
    truncateSync(path, text.length - Math.floor(whole.at(-1)!.length / 2) - 1);
    const r = await execa(process.execPath, [CLI, 'run', '--resume', dir], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        'the last line of trials\\.jsonl was cut short \\(tunebench was killed while writing it\\); ' +
          'it was dropped and that trial runs again',
      ),
    );
    const trace = readTrace(dir);
    assert.deepEqual(trace.records.map(trialKey), reference.records.map(trialKey));
    assert.deepEqual(trace.chosen, reference.chosen);
    // The trials before the cut line are the very records the killed run wrote.
    assert.deepEqual(
      trace.records.slice(0, whole.length - 1).map((r) => JSON.stringify(r)),
      whole.slice(0, -1),
    );
    const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
      status: string;
      resumes: { replayed_trials: number; notes: string[] }[];
    };
    assert.equal(run.status, 'finished');
    assert.equal(run.resumes.length, 1);
    assert.equal(run.resumes[0]!.replayed_trials, whole.length - 1);
  });

  it(
    'SIGTERM mid-trial stops the trial, writes the journal and a partial report, ' +
      'prints the resume command; --resume finishes the run',
    async () => {
      const out = tempDir();
      const child = execa(process.execPath, [CLI, 'run', FAULTS_EXPERIMENT, '--out', out], { reject: false });
      const dir = await waitForTrials(out, 'faults', 6);
      // Land the signal inside a trial: wait until the workload process of the next trial runs.
      await waitFor(
        'a running workload process',
        async () =>
          (await execa('pgrep', ['-f', 'simulated-gpu.mjs'], { reject: false })).exitCode === 0 ? true : null,
        30,
        10,
      );
      child.kill('SIGTERM');
      const r = await child;
      assert.equal(r.exitCode, 130, r.stderr);
      assert.match(r.stderr, /SIGTERM received; stopping the current trial/);
      assert.match(
        r.stderr,
        new RegExp(`Resume with: tunebench run --resume '?${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'?$`, 'm'),
      );
      // The stopped trial's process is gone, and so is the lock.
      assert.equal(
        (await execa('pgrep', ['-f', 'simulated-gpu.mjs'], { reject: false })).exitCode,
        1,
        'no workload process is left',
      );
      assert.equal(existsSync(join(dir, '.lock')), false);
      const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
        status: string;
        stopped: { reason: string; completed_trials: number; stage: string };
      };
      assert.equal(run.status, 'stopped');
      assert.equal(run.stopped.reason, 'stopped by SIGTERM');
      const kept = readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n');
      assert.equal(run.stopped.completed_trials, kept.length);
      // The partial report shows the finished stages and says how to go on.
      for (const f of ['report.html', 'summary.md'])
        assert.match(readFileSync(join(dir, f), 'utf8'), /Partial report[\s\S]*Resume with/);
      const resumed = await execa(process.execPath, [CLI, 'run', '--resume', dir, '--quiet'], { reject: false });
      assert.equal(resumed.exitCode, 0, resumed.stderr);
      const trace = readTrace(dir);
      assert.deepEqual(trace.records.map(trialKey), reference.records.map(trialKey));
      assert.deepEqual(
        trace.records.slice(0, kept.length).map((x) => JSON.stringify(x)),
        kept,
      );
      assert.deepEqual(trace.chosen, reference.chosen);
      assert.doesNotMatch(readFileSync(join(dir, 'summary.md'), 'utf8'), /Partial report/);
    },
  );

  it('refuses to resume a finished run, and a run directory in use', async () => {
    // The uninterrupted run of `before` is a finished run (its trace was read there).
    const dir = finished;
    const again = await execa(process.execPath, [CLI, 'run', '--resume', dir], { reject: false });
    assert.equal(again.exitCode, 2);
    assert.match(again.stderr, /nothing to resume: the run in .*run\.json finished at/);
    // A live process holds the lock: a second tunebench must not write the directory.
    const holder = execa('sleep', ['30']);
    const start = procStart(holder.pid!);
    writeFileSync(
      join(dir, '.lock'),
      JSON.stringify({
        pid: holder.pid,
        host: hostname(),
        proc_start: start,
        acquired_at: '2026-11-23T00:00:00.000Z',
        command: 'tunebench run x',
      }),
    );
    const busy = await execa(process.execPath, [CLI, 'run', '--resume', dir], { reject: false });
    holder.kill();
    await holder.catch(() => undefined);
    assert.equal(busy.exitCode, 1);
    assert.match(
      busy.stderr,
      new RegExp(
        `is in use by another tunebench \\(pid ${holder.pid} on ${hostname()} since 2026-11-23T00:00:00.000Z: ` +
          `tunebench run x\\); wait for it to finish, or stop it \\(kill ${holder.pid}\\) and resume`,
      ),
    );
    // A lock from another host cannot be checked: it is refused with the way out.
    writeFileSync(
      join(dir, '.lock'),
      JSON.stringify({
        pid: 1,
        host: 'node-17',
        proc_start: null,
        acquired_at: '2026-11-23T00:00:00.000Z',
        command: 'tunebench run x',
      }),
    );
    const remote = await execa(process.execPath, [CLI, 'run', '--resume', dir], { reject: false });
    assert.equal(remote.exitCode, 1);
    assert.match(
      remote.stderr,
      new RegExp(
        'locked by a tunebench on another host \\(pid 1 on node-17 .*\\); ' +
          'if that job is gone \\(its node failed or was preempted\\), delete .*\\.lock and resume',
      ),
    );
  });
});
