// Parsing recorded nvidia-smi output and /proc CPU counters.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { coreTimes, coreUtilisation } from '../../../harness/telemetry/cpu.js';
import { parseGpuInfo, parseGpuSamples } from '../../../harness/telemetry/nvidia-smi.js';
import { stat } from '../../../harness/telemetry/sampler.js';
import { FIXTURES } from '../../support/paths.js';

const recorded = (f: string) => readFileSync(join(FIXTURES, 'nvidia-smi', f), 'utf8');

describe('nvidia-smi parsing', () => {
  it('reads several GPUs, converting MiB to bytes', () => {
    const s = parseGpuSamples(recorded('a100x2-samples.csv'));
    assert.equal(s.length, 6);
    assert.deepEqual(s[0], {
      index: 0,
      name: 'NVIDIA A100-SXM4-80GB',
      utilization_pct: 87,
      memory_used_bytes: 61234 * 2 ** 20,
      memory_total_bytes: 81920 * 2 ** 20,
      power_watts: 312.45,
      sm_clock_mhz: 1410,
    });
    assert.equal(s[1]!.index, 1);
  });
  it('turns [N/A] and [Not Supported] into null, not zero', () => {
    const s = parseGpuSamples(recorded('a100x2-samples.csv'));
    assert.equal(s[4]!.power_watts, null);
    assert.equal(s[5]!.utilization_pct, null);
    assert.equal(parseGpuSamples(recorded('geforce-na.csv'))[0]!.power_watts, null);
  });
  it('skips lines it cannot read', () => {
    assert.deepEqual(
      parseGpuSamples('NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\n'),
      [],
    );
  });
  it('reads name, driver and memory for the fingerprint', () => {
    assert.deepEqual(parseGpuInfo(recorded('a100x2-info.csv'))[0], {
      name: 'NVIDIA A100-SXM4-80GB',
      driver: '535.129.03',
      memory_bytes: 81920 * 2 ** 20,
    });
  });
  it('summarises ignoring nulls', () => {
    assert.deepEqual(stat([1, null, 3]), { mean: 2, p95: 2.9, max: 3 });
    assert.equal(stat([null]), null);
  });
});

describe('/proc/stat', () => {
  it('computes per-core utilisation between two readings', () => {
    const before = coreTimes('cpu  1 2 3 4\ncpu0 100 0 100 800 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n');
    const after = coreTimes('cpu  1 2 3 4\ncpu0 150 0 150 800 0 0 0 0\ncpu1 0 0 0 1100 0 0 0 0\n');
    assert.deepEqual(coreUtilisation(before, after), [1, 0]);
  });
});
