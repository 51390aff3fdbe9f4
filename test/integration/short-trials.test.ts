// A short trial is lean: no telemetry process and no scan of /proc while a `true` runs. The GPU sampler (a looping
// nvidia-smi) and the first reading of the tree wait for the first telemetry interval.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { SAMPLE_MS } from '../../harness/telemetry/sampler.js';
import { runProcessTrial } from '../../harness/trial/process.js';
import { FIXTURES, tempDir } from '../support/paths.js';

/** A folder whose nvidia-smi logs each start, then plays back the recorded one. */
function loggingNvidiaSmi(): { dir: string; log: string } {
  const dir = tempDir();
  const log = join(dir, 'starts.log');
  const script = join(dir, 'nvidia-smi');
  writeFileSync(script, `#!/bin/sh\necho "$@" >> '${log}'\nexec '${join(FIXTURES, 'bin', 'nvidia-smi')}' "$@"\n`);
  chmodSync(script, 0o755);
  return { dir, log };
}

const trial = (script: string) =>
  runProcessTrial({
    argv: ['/bin/sh', '-c', script],
    env: {},
    timeoutSeconds: 20,
    mechanism: 'auto',
    eventsRequired: false,
    scratchDir: tempDir(),
    trialId: 't0000',
  });

describe('short trials', () => {
  it('start no nvidia-smi and take no sample when they end within the first interval; longer ones do', async () => {
    const smi = loggingNvidiaSmi();
    const saved = process.env['PATH'];
    process.env['PATH'] = `${smi.dir}${delimiter}${saved}`;
    try {
      for (let i = 0; i < 5; i++) {
        const r = await trial('exit 0');
        assert.equal(r.outcome, 'ok');
        // Five exits far inside one interval: nothing sampled, no GPU process started.
        if (r.timing!.seconds < SAMPLE_MS / 1000 / 4) assert.equal(r.telemetry.series.t.length, 0);
      }
      assert.ok(
        !existsSync(smi.log),
        `nvidia-smi started for a short trial: ${existsSync(smi.log) ? readFileSync(smi.log, 'utf8') : ''}`,
      );
      const long = await trial(`sleep ${(4 * SAMPLE_MS) / 1000}`);
      assert.equal(long.outcome, 'ok');
      assert.ok(long.telemetry.series.t.length >= 2, `${long.telemetry.series.t.length} samples`);
      assert.match(
        readFileSync(smi.log, 'utf8'),
        /--query-gpu=.*--loop-ms=/,
        'the GPU sampler started once the trial ran an interval',
      );
      assert.ok(long.telemetry.series.gpus.length > 0, 'GPU samples arrived');
    } finally {
      process.env['PATH'] = saved;
    }
  });
});
