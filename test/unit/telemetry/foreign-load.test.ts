// Foreign load from synthetic samples: the figure, the cores that count, and when it is material.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreTimes } from '../../../harness/telemetry/cpu.js';
import { allowedCpus, foreignLoad, foreignLoadNote, isMaterial } from '../../../harness/telemetry/foreign-load.js';
import type { ForeignLoad } from '../../../harness/domain/index.js';

const load = (over: Partial<ForeignLoad>): ForeignLoad => ({
  mean: 0,
  p95: 0,
  max: 0,
  available_cores: 2,
  share: 0,
  busy_cores: 0,
  ...over,
});

describe('foreign load', () => {
  it('is the busy cores minus the tree cores: a machine at 100% while the tree used 0.96 cores', () => {
    const f = foreignLoad(
      [0.96, 0.96, 0.96, 0.96],
      [
        [1, 1],
        [1, 1],
        [1, 1],
        [1, 1],
      ],
    )!;
    assert.deepEqual(f, { mean: 1.04, p95: 1.04, max: 1.04, available_cores: 2, share: 0.52, busy_cores: 2 });
    assert.ok(isMaterial(f));
    assert.match(
      foreignLoadNote(f),
      /^foreign load: processes outside the trial used 1\.04 cores on average \(p95 1\.04\) of the 2 available to the job \(52%\)/,
    );
  });

  it('summarises mean, p95 and max over the samples, clamping a negative difference at 0', () => {
    // Sample 3: the tree read more than the cores (the two counters are read a moment apart).
    const f = foreignLoad(
      [1, 1, 1, 1, 1],
      [
        [1, 0],
        [1, 0.5],
        [0.6, 0.3],
        [1, 1],
        [1, 0.2],
      ],
    )!;
    assert.equal(f.mean, 0.34); // (0 + 0.5 + 0 + 1 + 0.2) / 5
    assert.equal(f.max, 1);
    assert.equal(f.p95, 0.9); // sorted 0 0 0.2 0.5 1: 0.8 of the way from 0.5 to 1 (R type 7)
    assert.equal(f.busy_cores, 1.32);
    assert.ok(!isMaterial(f), '0.34 cores is below half a core');
  });

  it('counts only the cores the trial may use (a SLURM allocation, a cpuset)', () => {
    // 4 cores; the trial may use 0 and 1; a tenant keeps cores 2 and 3 busy.
    const perCore = [
      [1, 0.1, 1, 1],
      [0.9, 0.1, 1, 1],
    ];
    const own = foreignLoad([1, 1], perCore, [0, 1])!;
    assert.equal(own.available_cores, 2);
    assert.equal(own.mean, 0.05);
    assert.ok(!isMaterial(own));
    const machine = foreignLoad([1, 1], perCore)!;
    assert.equal(machine.mean, 2.05);
    assert.equal(machine.available_cores, 4);
  });

  it('is null without samples', () => {
    assert.equal(foreignLoad([], []), null);
  });

  it('is material from half a core, when it takes a quarter of the cores or fills them', () => {
    assert.ok(
      !isMaterial(load({ mean: 0.49, share: 0.245, busy_cores: 2 })),
      'below half a core, even on a full machine',
    );
    assert.ok(isMaterial(load({ mean: 0.5, share: 0.25, busy_cores: 1.2 })), 'a quarter of 2 cores');
    // 64 cores: two foreign cores beside a trial that uses 8 leave the trial's cores free.
    assert.ok(!isMaterial(load({ mean: 2, share: 2 / 64, available_cores: 64, busy_cores: 10 })));
    // The same two cores while the trial fills the other 62: they compete for time slices.
    assert.ok(isMaterial(load({ mean: 2, share: 2 / 64, available_cores: 64, busy_cores: 63.8 })));
    assert.ok(isMaterial(load({ mean: 16, share: 0.25, available_cores: 64, busy_cores: 20 })));
  });
});

describe('cores the trial may use', () => {
  it('reads Cpus_allowed_list ranges', () => {
    assert.deepEqual(
      [...allowedCpus('self', 'Name:\tx\nCpus_allowed:\tff\nCpus_allowed_list:\t0-3,8,10-11\n')!],
      [0, 1, 2, 3, 8, 10, 11],
    );
    assert.equal(allowedCpus('self', 'Cpus_allowed_list:\tnonsense\n'), null);
    assert.equal(allowedCpus('self', 'Name:\tx\n'), null);
    assert.ok(allowedCpus('self')!.size >= 1, 'this process may run somewhere');
  });

  it('keeps the id of each core of /proc/stat, with gaps for offline cores', () => {
    const cores = coreTimes('cpu  1 2 3 4\ncpu0 100 0 100 800 0 0 0 0\ncpu2 0 0 0 1000 0 0 0 0\n');
    assert.deepEqual(
      cores.map((c) => c.id),
      [0, 2],
    );
  });
});
