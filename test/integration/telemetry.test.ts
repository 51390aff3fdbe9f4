// Telemetry sampled around real processes; GPUs through a fake nvidia-smi that plays back recordings.
import assert from 'node:assert/strict';
import { cpus } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { fingerprint } from '../../harness/telemetry/fingerprint.js';
import { runProcessTrial } from '../../harness/trial/process.js';
import { FIXTURES, PROGRAMS, tempDir } from '../support/paths.js';

const spec = () => ({
  argv: [process.execPath, join(PROGRAMS, 'busy.mjs')],
  env: {},
  timeoutSeconds: 20,
  mechanism: 'none' as const,
  eventsRequired: true,
  scratchDir: tempDir(),
  trialId: 't0000',
});

describe('trial telemetry', () => {
  it('samples CPU of the tree, per core, and RSS every ~200 ms', async () => {
    const r = await runProcessTrial(spec());
    const t = r.telemetry;
    assert.equal(r.outcome, 'ok');
    assert.ok(t.series.t.length >= 3, `${t.series.t.length} samples`);
    assert.ok(t.summary.cpu_cores!.mean > 0.5, `busy loop used ${t.summary.cpu_cores!.mean} cores`);
    assert.ok(t.summary.rss_bytes!.max > 50e6, 'holds 50 MB');
    assert.equal(t.series.per_core[0]!.length, cpus().length);
    assert.deepEqual(t.summary.gpus, [], 'no GPU without nvidia-smi');
  });

  it('records GPU series from nvidia-smi on PATH, and the GPU in the fingerprint', async () => {
    const saved = process.env['PATH'];
    process.env['PATH'] = `${join(FIXTURES, 'bin')}${delimiter}${saved}`;
    try {
      const r = await runProcessTrial(spec());
      const gpus = r.telemetry.series.gpus;
      assert.equal(gpus.length, 2);
      assert.ok(gpus[0]!.t.length >= 2, 'looping samples arrived');
      assert.ok(gpus[0]!.utilization_pct.every((u) => u === null || (u >= 79 && u <= 93)));
      const s0 = r.telemetry.summary.gpus[0]!;
      assert.ok(s0.utilization_pct!.max <= 93 && s0.utilization_pct!.mean >= 79);
      assert.equal(gpus[1]!.memory_total_bytes, 81920 * 2 ** 20);
      const fp = fingerprint();
      assert.deepEqual(fp.gpu, {
        name: 'NVIDIA A100-SXM4-80GB',
        driver: '535.129.03',
        memory_bytes: 81920 * 2 ** 20,
        count: 2,
      });
    } finally {
      process.env['PATH'] = saved;
    }
  });
});
