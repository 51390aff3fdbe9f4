// The trial runner's stop hook on real processes: a workload that never stops by itself is ended at
// the hook (and judged a clean exit), and a plateau rule ends it once its memory has flattened, from
// the workload's memory_bytes or, without them, from the harness's own readings.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runProcessTrial } from '../../harness/trial/process.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { PROGRAMS, tempDir } from '../support/paths.js';

const FOREVER = join(PROGRAMS, 'steps-forever.mjs');
const RULE = { min_steps: 3, window: 10, tolerance: 0.002 };

function trial(env: Record<string, string>) {
  const workload = new CommandWorkload(
    { kind: 'command', command: [process.execPath, FOREVER], protocol: 'required', env },
    PROGRAMS,
  );
  return runTrial(
    { workload, limits: { memory: 512 * 2 ** 20, mechanism: 'auto', timeout: 30 }, scratchDir: tempDir() },
    {
      index: 0,
      stage: 'confirm',
      role: { kind: 'confirm' },
      config: { batch_size: 1 },
      measure: { warmupSteps: 0, steps: 1000, plateau: RULE },
    },
  );
}

describe('stopWhen', () => {
  it('ends a trial at the hook, as at done: ok, exit 0, stoppedEarly', async () => {
    let steps = 0;
    const r = await runProcessTrial({
      argv: [process.execPath, FOREVER],
      env: {},
      timeoutSeconds: 20,
      mechanism: 'auto',
      eventsRequired: true,
      scratchDir: tempDir(),
      trialId: 't0000',
      stopWhen: ({ events }) => (steps += events.filter((e) => e.event === 'step').length) >= 10,
    });
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.exitCode, 0);
    assert.equal(r.stoppedEarly, true);
    assert.match(r.reason, /stopped by the harness when its stop rule was met/);
    assert.ok(r.wallSeconds < 10, `ran ${r.wallSeconds} s`);
    assert.ok(r.events.filter((e) => e.event === 'step').length >= 10);
  });

  it("a plateau rule ends the trial one window after the workload's last new peak", async () => {
    const r = await trial({});
    assert.equal(r.outcome, 'ok', r.reason);
    // Memory rises up to step 5; ten steps later, at step 15, the window has no new peak.
    const { cap_peak_bytes: capPeak, ...growth } = r.memory_growth as { cap_peak_bytes?: number };
    assert.deepEqual(growth, {
      verdict: 'plateau',
      at_step: 15,
      peak_bytes: 50 * 2 ** 20,
      source: 'workload',
    });
    // Under a cgroup the cap's own measure of the run is kept beside the workload's reading.
    assert.equal(capPeak, r.limit.mechanism.startsWith('cgroup') ? r.peak_limited_bytes : undefined);
    assert.equal(r.memory_series?.source, 'workload');
    assert.deepEqual(
      r.memory_series?.bytes.slice(0, 7),
      [40, 42, 44, 46, 48, 50, 50].map((m) => m * 2 ** 20),
    );
    assert.ok(r.steps.length < 100, `stopped after ${r.steps.length} steps`);
    // Stopped before its memory event: the peak comes from the steps.
    assert.equal(r.workload_report?.['peak_bytes'], 50 * 2 ** 20);
  });

  it('without memory_bytes the harness reads the memory itself', async () => {
    const r = await trial({ NO_MEMORY: '1', STEP_MS: '50' });
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.memory_growth?.verdict, 'plateau');
    assert.ok(['cgroup', 'tree-rss'].includes(r.memory_series!.source), r.memory_series!.source);
    // One reading per read of the events file (every 200 ms), not one per step.
    assert.ok(r.memory_series!.steps.length < r.steps.length, 'fewer readings than steps');
    assert.ok(r.steps.length < 1000);
  });
});
