// How limits.memory is enforced on each cgroup layout, and never as an address-space cap where CUDA may run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planLimit } from '../../../harness/trial/limits.js';
import { cgroupMounts, ownCgroups, type CgroupHost } from '../../../harness/trial/cgroup-host.js';

const GiB = 2 ** 30;
/** The layouts: the H200 machine's cgroup v2 with memory enabled, this machine's v1, and none at all. */
const V2: CgroupHost = { unified: { dir: '/sys/fs/cgroup/job', memory: true } };
const V2_NOT_ENABLED: CgroupHost = {
  unified: {
    dir: '/sys/fs/cgroup',
    memory: false,
    why: 'the memory controller is available to /sys/fs/cgroup but not enabled for its children, and enabling it failed (EBUSY)',
  },
};
const V1: CgroupHost = { memory: '/sys/fs/cgroup/memory/user.slice', freezer: '/sys/fs/cgroup/freezer' };
const NONE: CgroupHost = {};

describe('planLimit', () => {
  it('caps a CUDA workload with the memory cgroup wherever there is one (v2, else v1)', () => {
    assert.equal(planLimit(2 * GiB, 'auto', V2, 'declared').mechanism, 'cgroup-v2');
    assert.equal(planLimit(2 * GiB, 'auto', V1, 'declared').mechanism, 'cgroup-v1');
    assert.equal(planLimit(2 * GiB, 'auto', V1, 'possible').mechanism, 'cgroup-v1');
  });

  it('never gives a CUDA workload an address-space cap: a refusal that says why and what to do', () => {
    for (const host of [NONE, V2_NOT_ENABLED])
      assert.throws(
        () => planLimit(2 * GiB, 'auto', host, 'declared'),
        /needs a memory cgroup.*failed to map segment.*Remove limits\.memory/,
      );
    assert.throws(() => planLimit(2 * GiB, 'auto', V2_NOT_ENABLED, 'declared'), /EBUSY/);
    // A program that may not use the GPU is told how to keep the address-space cap.
    assert.throws(() => planLimit(2 * GiB, 'auto', NONE, 'possible'), /set limits\.mechanism: prlimit/);
    assert.throws(() => planLimit(2 * GiB, 'prlimit', V2, 'declared'), /"prlimit" with a CUDA device.*refused/);
    // Explicitly asked for a program that may not use the GPU, and on a CPU: prlimit as before.
    assert.equal(planLimit(2 * GiB, 'prlimit', NONE, 'possible').mechanism, 'prlimit-as');
    assert.equal(planLimit(2 * GiB, 'auto', NONE, 'none').mechanism, 'prlimit-as');
    // No limits.memory: nothing to enforce, CUDA or not.
    assert.equal(planLimit(undefined, 'auto', NONE, 'declared').mechanism, 'none');
  });

  it('reads the layouts from recorded /proc/self/mountinfo and /proc/self/cgroup', () => {
    const mountinfo = [
      '35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot',
      '36 24 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,memory',
    ].join('\n');
    const mounts = cgroupMounts(mountinfo);
    assert.deepEqual(
      mounts.map((m) => [m.type, m.point]),
      [
        ['cgroup2', '/sys/fs/cgroup'],
        ['cgroup', '/sys/fs/cgroup/memory'],
      ],
    );
    const own = ownCgroups('12:memory:/user.slice\n0::/init.scope\n');
    assert.equal(own.get(''), '/init.scope');
    assert.equal(own.get('memory'), '/user.slice');
  });
});
