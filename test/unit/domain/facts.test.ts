// The typed vocabulary other layers decide on: a trial's role and a device class are built and read
// by one pair of functions each, so no decision matches their wording.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deviceName, isCpuDevice, role, roleKind } from '../../../harness/domain/index.js';

describe('roles', () => {
  it('build the kind first and read it back, whatever places the trial', () => {
    assert.equal(role('warm-up', 2), 'warm-up 2');
    assert.equal(role('candidate', 'pair', 3), 'candidate pair 3');
    assert.equal(roleKind(role('candidate', 'pair', 3)), 'candidate');
    assert.equal(roleKind(role('warm-up', 'round', 1)), 'warm-up');
    assert.equal(roleKind('probe'), 'probe');
    // A kind that only starts like another is not that kind.
    assert.notEqual(roleKind('warm-upper 1'), 'warm-up');
  });
});

describe('device classes', () => {
  it('name the GPU, else the CPU model, and tell a CPU machine from its class', () => {
    const gpu = deviceName({ gpu: { name: 'NVIDIA H100 80GB HBM3' }, cpu: { model: 'Xeon' } });
    const cpu = deviceName({ gpu: null, cpu: { model: 'AMD EPYC' } });
    assert.equal(gpu, 'NVIDIA H100 80GB HBM3');
    assert.equal(isCpuDevice(gpu), false);
    assert.equal(isCpuDevice(cpu), true);
    // A GPU whose name happens to mention a CPU is still a GPU.
    assert.equal(isCpuDevice(deviceName({ gpu: { name: 'GH200 (CPU: Grace)' }, cpu: { model: 'Grace' } })), false);
  });
});
