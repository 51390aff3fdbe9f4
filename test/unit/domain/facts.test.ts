// The typed vocabulary other layers decide on: a trial's role is typed (its words made only where it is
// printed, and read back only from records of formats 1 and 2), and a device class is built and read by
// one pair of functions, so no decision matches their wording.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deviceName, isCpuDevice, roleOfText, roleText, sameRole } from '../../../harness/domain/index.js';

describe('roles', () => {
  it('are worded kind first, and the words of an older record read back as the same role', () => {
    assert.equal(roleText({ kind: 'warm-up', round: 2 }), 'warm-up round 2');
    assert.equal(roleText({ kind: 'candidate', pair: 3 }), 'candidate pair 3');
    const bisect = { kind: 'compare', round: 2, bisect: { purpose: 'check', attempt: 1, commit: 'good' } } as const;
    assert.equal(roleText(bisect), 'check-1 good compare round 2');
    for (const r of [{ kind: 'candidate', pair: 3 } as const, { kind: 'probe' } as const, bisect])
      assert.deepEqual(roleOfText(roleText(r)), r);
    // Format 2 wrote a numbered warm-up without "round": the same warm-up.
    assert.ok(sameRole(roleOfText('warm-up 2')!, { kind: 'warm-up', round: 2 }));
    assert.ok(!sameRole({ kind: 'warm-up', round: 1 }, { kind: 'warm-up', round: 2 }));
    // A kind that only starts like another is not that kind, nor any role tunebench writes.
    assert.equal(roleOfText('warm-upper 1'), undefined);
    assert.equal(roleOfText('training'), undefined);
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
