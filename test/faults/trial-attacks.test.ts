// Workloads written to misbehave against the trial runner (issue "trials that always end"): an
// escaped descendant holding the pipes, a teardown that hangs after `done`, and an events file that
// is a FIFO, a link to /dev/zero or 600 MB without a newline. Each trial must end within its
// timeout (here: long before it), keep what it measured, and leave no process behind.
import { warningText } from '../../harness/report/warnings.js';
import type { RunWarning } from '../../harness/domain/index.js';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hardExit, onHardExit } from '../../harness/engine/hard-exit.js';
import {
  markedProcesses,
  runProcessTrial,
  TRIAL_MARK_ENV,
  type ProcessTrialSpec,
} from '../../harness/trial/process.js';
import { execa } from 'execa';
import { commandExperiment, startHangingRun } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { waitFor } from '../support/wait.js';
import { requireSystem } from '../support/system.js';

function spec(mode: string, extra: Partial<ProcessTrialSpec> = {}): ProcessTrialSpec & { pidFile: string } {
  const dir = tempDir();
  const pidFile = join(dir, 'pids.json');
  return {
    argv: [process.execPath, join(PROGRAMS, 'misbehaves.mjs')],
    env: { MODE: mode, FIXTURE_PID_FILE: pidFile },
    timeoutSeconds: 30,
    mechanism: 'none',
    eventsRequired: true,
    scratchDir: dir,
    trialId: 't0000',
    pidFile,
    ...extra,
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const t0 = Date.now();
  const value = await work();
  return { value, seconds: (Date.now() - t0) / 1000 };
}

describe('trials that always end', { timeout: 120_000 }, () => {
  it(
    'a helper that escaped into its own session and holds stdout: ' +
      'the trial ends at the exit, ok with its steps, and the helper is killed',
    async () => {
      const s = spec('escaped-helper');
      const { value: r, seconds } = await timed(() => runProcessTrial(s));
      assert.ok(seconds < 8, `took ${seconds} s (the timeout is 30 s)`);
      assert.equal(r.outcome, 'ok', r.reason);
      assert.equal(r.events.filter((e) => e.event === 'step').length, 3);
      const { helper } = JSON.parse(readFileSync(s.pidFile, 'utf8')) as { helper: number };
      // SIGKILL is delivered at once, but the zombie may take a moment to be reaped by init.
      for (let i = 0; i < 50 && alive(helper) && !/State:\s+Z/.test(safeStatus(helper)); i++)
        await new Promise((r2) => setTimeout(r2, 100));
      assert.ok(!alive(helper) || /State:\s+Z/.test(safeStatus(helper)), `helper ${helper} survived the trial`);
    },
  );

  it('a teardown that hangs after done: killed after the grace, recorded ok with its steps', async () => {
    const { value: r, seconds } = await timed(() => runProcessTrial(spec('done-then-hang', { doneGraceSeconds: 1 })));
    assert.ok(seconds < 8, `took ${seconds} s`);
    assert.equal(r.outcome, 'ok');
    assert.match(r.reason, /reported done after 3 step event\(s\), then did not exit within 1 s .*its steps are kept/);
    assert.equal(r.events.filter((e) => e.event === 'step').length, 3);
  });

  it('stopped at its done event (as every trial of a run is): ends at once, ok, counted as exit 0', async () => {
    const { value: r, seconds } = await timed(() =>
      runProcessTrial(spec('done-then-hang', { doneGraceSeconds: 30, stopAtDone: true })),
    );
    // The teardown hangs and ignores SIGTERM: only the stop at `done` ends it before the 30 s grace.
    assert.ok(seconds < 4, `took ${seconds} s`);
    assert.equal(r.outcome, 'ok');
    assert.equal(r.exitCode, 0);
    assert.equal(r.signal, null);
    assert.match(r.reason, /stopped at its done event/);
    assert.equal(r.events.filter((e) => e.event === 'step').length, 3);
  });

  for (const [mode, why] of [
    ['fifo', /not a regular file/],
    ['dev-zero', /not a regular file/],
    ['no-newline', /malformed|grew past/],
  ] as const) {
    const outcome = 'the trial ends with the reason and the harness stays responsive';
    it(`an events file replaced by ${mode}: ${outcome}`, async () => {
      let ticks = 0;
      const ticker = setInterval(() => (ticks += 1), 50);
      const { value: r, seconds } = await timed(() => runProcessTrial(spec(mode)));
      clearInterval(ticker);
      assert.ok(seconds < 15, `took ${seconds} s`);
      // The event loop kept running while the file was read.
      assert.ok(ticks >= Math.floor(seconds * 10) - 4, `${ticks} ticks in ${seconds} s`);
      if (mode === 'no-newline') {
        // The one good line before the garbage is kept; the 600 MB line is malformed.
        assert.equal(r.events.filter((e) => e.event === 'step').length, 1);
        assert.ok(r.malformedEvents >= 1);
        assert.equal(r.outcome, 'ok');
      } else {
        assert.equal(r.outcome, 'invalid');
      }
      assert.match(r.reason, why);
    });
  }

  it(
    'a second Ctrl-C exits 130 at once, yet kills the trial, ' + 'marks run.json stopped and releases the lock',
    async () => {
      const { child, out, pids } = await startHangingRun();
      // hangs.mjs ignores SIGTERM, so the first signal waits for the kill grace; the second does not wait.
      child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 200));
      child.kill('SIGINT');
      const { value: r, seconds } = await timed(async () => child);
      assert.equal(r.exitCode, 130, r.stderr);
      assert.ok(seconds < 2, `the second signal took ${seconds} s`);
      assert.match(r.stderr, /second SIGINT: the trial was killed and the run marked stopped/);
      const runDir = join(out, 'hangs', readdirSync(join(out, 'hangs'))[0]!);
      const run = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as {
        status: string;
        stopped?: { reason: string };
      };
      assert.equal(run.status, 'stopped');
      assert.match(run.stopped!.reason, /stopped by a second SIGINT/);
      assert.ok(!existsSync(join(runDir, '.lock')), 'the lock was released');
      await new Promise((r2) => setTimeout(r2, 300));
      for (const pid of [pids.child, pids.grandchild])
        assert.ok(!alive(pid) || /State:\s+Z/.test(safeStatus(pid)), `process ${pid} of the trial survived`);
    },
  );

  it('a compare whose every trial failed is a failed run: exit 2, nothing chosen, the reason named', async () => {
    const dir = tempDir();
    const experiment = commandExperiment(
      dir,
      'allfail',
      [process.execPath, join(PROGRAMS, 'crash-message.mjs')],
      ['  params: { batch_size: 8 }'],
      [
        'limits: { timeout: 20s }',
        'stages:',
        '  - kind: compare',
        '    param: x',
        '    arms: [1, 2]',
        '    repeats: 3',
      ],
    );
    const r = await execa(
      process.execPath,
      [CLI, 'run', experiment, '--out', join(dir, 'reports'), '--quiet', '--json'],
      { reject: false },
    );
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /the workload failed in stage compare-1: .*no successful trial/);
    const result = JSON.parse(r.stdout) as { chosen: Record<string, unknown>; failed_stages: string[] };
    assert.deepEqual(result.failed_stages, ['compare-1']);
    assert.equal(result.chosen['x'], undefined);
  });

  it(
    'a tree that holds more than a per-process (prlimit) cap ' + 'is flagged in the record and the run warnings',
    { skip: requireSystem('python3') },
    async () => {
      const dir = tempDir();
      const experiment = commandExperiment(
        dir,
        'tree',
        ['/usr/bin/python3', join(PROGRAMS, 'tree-memory.py')],
        ['  protocol: required', '  params: { batch_size: 8 }'],
        [
          'limits: { timeout: 60s, memory: 400MiB, mechanism: prlimit }',
          'measure: { warmup_steps: 0, steps: 1 }',
          'stages:',
          '  - kind: sweep',
          '    params: { x: [1] }',
          '    strategy: grid',
          '    repeats: 1',
        ],
      );
      const out = join(dir, 'reports');
      const r = await execa(process.execPath, [CLI, 'run', experiment, '--out', out, '--quiet', '--json'], {
        reject: false,
      });
      assert.equal(r.exitCode, 0, r.stderr);
      const parsed = JSON.parse(r.stdout) as { warnings: RunWarning[]; run_dir: string };
      const result = { ...parsed, warnings: parsed.warnings.map(warningText) };
      assert.ok(
        parsed.warnings.some((w) => w.kind === 'tree-over-cap' && w.trials === 1 && w.first_trial >= 0),
        JSON.stringify(parsed.warnings),
      );
      assert.ok(
        result.warnings.some((w) =>
          new RegExp(
            '1 trial\\(s\\) held more memory across their processes than the 400(\\.00)? MiB cap ' +
              ".*prlimit caps each process's address space, not the process tree",
          ).test(w),
        ),
        JSON.stringify(result.warnings),
      );
      const record = JSON.parse(readFileSync(join(result.run_dir, 'trials.jsonl'), 'utf8').split('\n')[0]!) as {
        outcome: string;
        peak_rss_bytes: number;
        limit: { tree_over_cap_bytes?: number };
        notes?: string[];
      };
      assert.equal(record.outcome, 'ok');
      assert.ok(record.peak_rss_bytes > 400 * 1024 * 1024, String(record.peak_rss_bytes));
      // The fact is a field of the record; the note and the warning are only its wording.
      assert.ok(record.limit.tree_over_cap_bytes! > 400 * 1024 * 1024, JSON.stringify(record.limit));
      assert.match(
        record.notes?.join(' ') ?? '',
        /exceeded the 400(\.00)? MiB cap: prlimit caps each process, not the tree/,
      );
    },
  );

  it(
    'an uncaught error: ' +
      'hardExit kills the running trial and runs the hooks that mark the run failed and unlock it',
    async () => {
      const s = spec('done-then-hang');
      const hangs = { ...s, argv: [process.execPath, join(PROGRAMS, 'hangs.mjs')] };
      const trial = runProcessTrial(hangs);
      const pids = await waitFor(
        'the trial under way',
        () =>
          existsSync(s.pidFile)
            ? (JSON.parse(readFileSync(s.pidFile, 'utf8')) as { child: number; grandchild: number })
            : null,
        30,
      );
      const calls: string[] = [];
      const off = onHardExit((status, reason) => calls.push(`${status}: ${reason}`));
      hardExit('failed', 'tunebench failed: boom');
      off();
      assert.deepEqual(calls, ['failed: tunebench failed: boom']);
      const { seconds } = await timed(() => trial);
      assert.ok(seconds < 5, `the killed trial took ${seconds} s to end`);
      for (const pid of [pids.child, pids.grandchild])
        assert.ok(!alive(pid) || /State:\s+Z/.test(safeStatus(pid)), `process ${pid} survived`);
    },
  );

  it('marks every process of a trial so that none can hide from the kill', () => {
    assert.equal(TRIAL_MARK_ENV, 'TUNEBENCH_TRIAL_MARK');
    assert.deepEqual(markedProcesses('no-such-mark'), []);
  });
});

function safeStatus(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 'State: gone';
  }
}
