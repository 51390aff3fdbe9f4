// Foreign load on this machine: a real trial (one busy core) beside a real busy process, and alone.
// The machine is shared, so the quiet case checks the harness against an independent reading of
// /proc (all cores busy minus this process and its reaped children) instead of assuming quiet.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { after, describe, it } from 'node:test';
import { CLK_TCK, coreTimes } from '../../harness/telemetry/cpu.js';
import { foreignLoad } from '../../harness/telemetry/foreign-load.js';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { PROGRAMS, tempDir } from '../support/paths.js';

const node = process.execPath;
const hogs: ChildProcess[] = [];

/**
 * A process that keeps one core busy until killed; `core` pins it with taskset. Each hog gets its own
 * session: with autogroup scheduling, CPU is shared fairly between sessions, not processes.
 */
async function hog(core?: number): Promise<ChildProcess> {
  const loop = [node, '-e', 'for(;;){}'];
  const child = spawn(
    core === undefined ? loop[0]! : 'taskset',
    core === undefined ? loop.slice(1) : ['-c', String(core), ...loop],
    { stdio: 'ignore', detached: true },
  );
  hogs.push(child);
  await new Promise((res) => setTimeout(res, 300)); // started and spinning
  return child;
}

/** Kills a hog and waits until it is reaped, so that its CPU time is in this process's cutime from then on. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((res) => child.once('exit', res));
  child.kill('SIGKILL');
  await exited;
}

function trial(argv: string[]) {
  const ctx: TrialContext = {
    workload: new CommandWorkload({ kind: 'command', command: argv, protocol: 'required' }, PROGRAMS),
    limits: { mechanism: 'none', timeout: 20 },
    scratchDir: tempDir(),
  };
  return runTrial(ctx, {
    index: 0,
    stage: 's',
    role: { kind: 'probe' },
    config: {},
    measure: { warmupSteps: 0, steps: 1 },
  });
}

/** CPU seconds of this process and of its reaped children (the trial), from /proc/self/stat. */
function ownCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((s, i) => s + Number(f[i]), 0) / CLK_TCK;
}

after(() => Promise.all(hogs.map(stop)));

describe('foreign load on a real machine', { skip: cpus().length < 2 ? 'needs 2 cores' : false }, () => {
  it('a busy process beside the trial: the record carries the figure and a note', async () => {
    const h = await hog();
    try {
      const r = await trial([node, 'busy.mjs']);
      assert.equal(r.outcome, 'ok');
      const f = r.telemetry.summary.foreign_load!;
      assert.equal(f.available_cores, cpus().length);
      assert.ok(f.mean >= 0.5, `a busy loop beside the trial: foreign load ${JSON.stringify(f)}`);
      assert.ok(
        r.notes?.some((n) => /^foreign load: processes outside the trial used \d\.\d\d cores on average/.test(n)),
        `notes: ${JSON.stringify(r.notes)}`,
      );
    } finally {
      await stop(h);
    }
  });

  it('nothing started beside the trial: a note exactly when /proc says others were busy', async (t) => {
    const before = { cores: coreTimes(), own: ownCpuSeconds() };
    const r = await trial([node, 'busy.mjs']);
    const cores = coreTimes();
    const busy = cores.reduce((s, c, i) => s + c.busy - before.cores[i]!.busy, 0);
    const total = cores.reduce((s, c, i) => s + c.total - before.cores[i]!.total, 0);
    const seconds = total / cores.length / CLK_TCK;
    // Busy cores over the window, less this test process and the trial (reaped, so in cutime).
    const others = (busy / CLK_TCK - (ownCpuSeconds() - before.own)) / seconds;
    const f = r.telemetry.summary.foreign_load!;
    const noted = r.notes?.some((n) => n.startsWith('foreign load')) ?? false;
    t.diagnostic(`other processes by /proc: ${others.toFixed(2)} cores; the trial's figure: ${JSON.stringify(f)}`);
    if (others < 0.25) {
      assert.equal(noted, false, 'a quiet machine gives no note');
      assert.ok(f.mean < 0.5, `${f.mean}`);
    } else if (others >= 1) {
      assert.equal(noted, true, 'a machine busy with other work gives a note');
    } else {
      t.diagnostic('the machine was partly busy with other work: neither outcome is asserted');
    }
  });

  it(
    'pinned to one core (as in an allocation): only that core counts',
    {
      skip: process.platform !== 'linux',
    },
    async (t) => {
      const h = await hog(1);
      try {
        const r = await trial(['taskset', '-c', '0', node, 'busy.mjs']);
        assert.equal(r.outcome, 'ok');
        const f = r.telemetry.summary.foreign_load!;
        assert.equal(f.available_cores, 1, 'the trial may use core 0 only');
        // The same samples over the whole machine count the busy core 1 as well.
        const machine = foreignLoad(r.telemetry.series.cpu_cores, r.telemetry.series.per_core)!;
        t.diagnostic(`hog on core 1: ${f.mean} cores on core 0, ${machine.mean} over the machine`);
        assert.ok(
          machine.mean - f.mean >= 0.7,
          `core 1 is busy: ${machine.mean} over the machine, ${f.mean} on core 0`,
        );
      } finally {
        await stop(h);
      }
      // Two hogs on core 0 leave the trial about a third of it.
      const same = [await hog(0), await hog(0)];
      try {
        const r = await trial(['taskset', '-c', '0', node, 'busy.mjs']);
        const f = r.telemetry.summary.foreign_load!;
        t.diagnostic(`two hogs on core 0: ${JSON.stringify(f)}`);
        assert.ok(f.mean >= 0.5, `two hogs share core 0 with the trial: ${JSON.stringify(f)}`);
        assert.ok(
          r.notes?.some((n) => n.startsWith('foreign load')),
          `notes: ${JSON.stringify(r.notes)}`,
        );
      } finally {
        await Promise.all(same.map(stop));
      }
    },
  );
});
