// A short trial is lean: no telemetry process and no scan of /proc while a `true` runs. The GPU sampler (a looping
// nvidia-smi) and the first reading of the tree wait for the first telemetry interval.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { SAMPLE_MS } from '../../harness/telemetry/sampler.js';
import { FIXTURES, tempDir } from '../support/paths.js';
import { shellTrial } from '../support/shell-trial.js';

/** A folder whose nvidia-smi logs each start, then plays back the recorded one. */
function loggingNvidiaSmi(): { dir: string; log: string } {
  const dir = tempDir();
  const log = join(dir, 'starts.log');
  const script = join(dir, 'nvidia-smi');
  writeFileSync(script, `#!/bin/sh\necho "$@" >> '${log}'\nexec '${join(FIXTURES, 'bin', 'nvidia-smi')}' "$@"\n`);
  chmodSync(script, 0o755);
  return { dir, log };
}

describe('short trials', () => {
  it('start no nvidia-smi and take no sample when they end within the first interval; longer ones do', async () => {
    const smi = loggingNvidiaSmi();
    const saved = process.env['PATH'];
    process.env['PATH'] = `${smi.dir}${delimiter}${saved}`;
    try {
      // Trials that outlived an interval (only on a machine too loaded to start a shell in 200 ms) may sample.
      let long = 0;
      for (let i = 0; i < 5; i++) {
        const r = await shellTrial('exit 0');
        assert.equal(r.outcome, 'ok');
        // Five exits far inside one interval: nothing sampled, no GPU process started.
        if (r.wallSeconds >= SAMPLE_MS / 1000) long += 1;
        else assert.equal(r.telemetry.series.t.length, 0, 'no sample within the first interval');
      }
      const starts = existsSync(smi.log) ? readFileSync(smi.log, 'utf8').trim().split('\n').length : 0;
      assert.ok(
        starts <= long,
        `nvidia-smi started ${starts} time(s) for ${5 - long} trial(s) shorter than an interval`,
      );
      const longer = await shellTrial(`sleep ${(4 * SAMPLE_MS) / 1000}`);
      assert.equal(longer.outcome, 'ok');
      assert.ok(longer.telemetry.series.t.length >= 2, `${longer.telemetry.series.t.length} samples`);
      assert.match(
        readFileSync(smi.log, 'utf8'),
        /--query-gpu=.*--loop-ms=/,
        'the GPU sampler started once the trial ran an interval',
      );
      assert.ok(longer.telemetry.series.gpus.length > 0, 'GPU samples arrived');
    } finally {
      process.env['PATH'] = saved;
    }
  });
});
