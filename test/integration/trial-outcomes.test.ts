// Real child processes through the trial runner: every outcome class, classified from real signals.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runProcessTrial, type ProcessTrialSpec } from '../../harness/trial/process.js';
import { PROGRAMS, tempDir } from '../support/paths.js';
import { PYTHON, requireSystem } from '../support/system.js';

function spec(program: string, extra: Partial<ProcessTrialSpec> = {}): ProcessTrialSpec {
  return {
    argv: [process.execPath, join(PROGRAMS, program)],
    env: {},
    timeoutSeconds: 20,
    mechanism: 'auto',
    eventsRequired: true,
    scratchDir: tempDir(),
    trialId: 't0000',
    ...extra,
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('trial outcomes from real processes', () => {
  it(
    'calls a program that cannot load its libraries under an address-space cap a limit problem, not a crash',
    { skip: requireSystem('torch') },
    async () => {
      // Debian's torch under 300 MB of address space: glibc cannot map a segment of a shared library.
      const r = await runProcessTrial(
        spec('', { argv: [PYTHON, '-c', 'import torch'], memoryBytes: 300e6, mechanism: 'prlimit' }),
      );
      assert.equal(r.limit.mechanism, 'prlimit-as');
      assert.equal(r.outcome, 'invalid', r.reason);
      assert.equal(r.limitProblem, true);
      assert.match(r.reason, /address-space cap .* before its first step.*failed to map segment/);
      assert.match(r.reason, /limits\.mechanism: cgroup/);
    },
  );

  it('classifies an abort (SIGABRT) as a crash and keeps the stderr tail', async () => {
    const r = await runProcessTrial(spec('aborts.mjs'));
    assert.equal(r.outcome, 'crash');
    assert.equal(r.signal, 'SIGABRT');
    assert.match(r.stderrTail, /about to abort/);
    assert.equal(r.events.filter((e) => e.event === 'step').length, 1);
  });

  it('kills a hanging trial and its grandchild at the timeout', async () => {
    const pidFile = join(tempDir(), 'pids.json');
    const started = Date.now();
    const r = await runProcessTrial(spec('hangs.mjs', { timeoutSeconds: 1.5, env: { FIXTURE_PID_FILE: pidFile } }));
    assert.equal(r.outcome, 'timeout');
    assert.ok(existsSync(pidFile), 'the fixture recorded its pids');
    const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as { child: number; grandchild: number };
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(alive(pids.child), false, 'child killed');
    assert.equal(alive(pids.grandchild), false, 'grandchild killed with the tree');
    // SIGTERM is ignored by the fixture, so the kill needed the SIGKILL escalation.
    assert.ok(Date.now() - started < 10_000);
  });

  it('treats garbage on stdout as noise when the events are valid', async () => {
    const r = await runProcessTrial(spec('garbage-stdout.mjs'));
    assert.equal(r.outcome, 'ok');
    assert.equal(r.events.filter((e) => e.event === 'step').length, 3);
    assert.equal(r.malformedEvents, 0);
  });

  it('counts malformed event lines and calls a run without steps invalid', async () => {
    const r = await runProcessTrial(spec('garbage-events.mjs'));
    assert.equal(r.outcome, 'invalid');
    assert.equal(r.malformedEvents, 4);
    assert.match(r.reason, /4 malformed event line/);
  });

  it('classifies a V8 ArrayBuffer failure under an address-space cap as oom', async () => {
    const r = await runProcessTrial(spec('v8-oom.mjs', { memoryBytes: 1.6e9, mechanism: 'prlimit' }));
    assert.equal(r.limit.mechanism, 'prlimit-as');
    assert.equal(r.outcome, 'oom', r.reason + r.stderrTail);
    assert.match(r.stderrTail, /Array buffer allocation failed/);
  });

  it('classifies a SIGKILL it did not send as oom', async () => {
    const r = await runProcessTrial(spec('killed.mjs'));
    assert.equal(r.outcome, 'oom');
    assert.match(r.reason, /SIGKILL not sent by tunebench/);
  });

  it('trusts an oom event over the exit status', async () => {
    const r = await runProcessTrial(spec('reports-oom.mjs'));
    assert.equal(r.outcome, 'oom');
    assert.match(r.reason, /CUDA out of memory/);
  });

  it('classifies a rejected configuration as invalid', async () => {
    const r = await runProcessTrial(spec('rejects-config.mjs', { env: { TUNEBENCH_PRECISION: 'fp8' } }));
    assert.equal(r.outcome, 'invalid');
    assert.match(r.reason, /unsupported precision fp8/);
  });

  it('classifies an ordinary exception as a crash, not oom', async () => {
    const r = await runProcessTrial(spec('crash-message.mjs'));
    assert.equal(r.outcome, 'crash');
    assert.equal(r.exitCode, 1);
    assert.match(r.stderrTail, /division by zero/);
  });

  it('stops a trial when the run is aborted and marks it aborted, not timed out', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const r = await runProcessTrial(
      spec('hangs.mjs', { signal: controller.signal, env: { FIXTURE_PID_FILE: join(tempDir(), 'p.json') } }),
    );
    assert.equal(r.aborted, true);
    assert.notEqual(r.outcome, 'timeout');
  });
});
