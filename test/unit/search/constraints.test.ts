// The CPU budget counts the main process: uses + main <= max, main 1 unless uses names intra_op_threads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Constraints, mainCpus } from '../../../harness/search/constraints.js';

const slurm = (n: number) => ({ SLURM_CPUS_PER_TASK: String(n) });

describe('CPU budget with the main process', () => {
  it('counts one main process by default: 2 workers do not fit on 2 CPUs, 1 does', () => {
    const c = new Constraints({ cpus: { uses: 'num_workers', max: 'cpus' } }, slurm(2));
    const { runnable, pruned } = c.split([{ num_workers: 0 }, { num_workers: 1 }, { num_workers: 2 }]);
    assert.deepEqual(runnable, [{ num_workers: 0 }, { num_workers: 1 }]);
    assert.equal(pruned.length, 1);
    assert.equal(pruned[0]!.reason, 'CPU budget: num_workers 2 + 1 main process = 3 > 2 CPUs (SLURM_CPUS_PER_TASK)');
  });

  it('takes main: 0 for a program whose workers include the main process, and a larger main', () => {
    assert.equal(
      new Constraints({ cpus: { uses: 'num_workers', max: 'cpus', main: 0 } }, slurm(2)).check({ num_workers: 2 }),
      undefined,
    );
    const two = new Constraints({ cpus: { uses: 'num_workers', max: 'cpus', main: 2 } }, slurm(4));
    assert.equal(two.check({ num_workers: 2 }), undefined);
    assert.equal(
      two.check({ num_workers: 3 }),
      'CPU budget: num_workers 3 + 2 main process = 5 > 4 CPUs (SLURM_CPUS_PER_TASK)',
    );
  });

  it('does not count the main process twice when uses names intra_op_threads (ONNX Runtime runs in it)', () => {
    assert.equal(mainCpus({ uses: 'num_workers + intra_op_threads', max: 'cpus' }), 0);
    assert.equal(mainCpus({ uses: 'num_workers', max: 'cpus' }), 1);
    assert.equal(mainCpus({ uses: 3, max: 'cpus' }), 1);
    const c = new Constraints({ cpus: { uses: 'num_workers + intra_op_threads', max: 'cpus' } }, slurm(4));
    assert.equal(c.check({ num_workers: 2, intra_op_threads: 2 }), undefined);
    assert.equal(
      c.check({ num_workers: 3, intra_op_threads: 2 }),
      'CPU budget: num_workers + intra_op_threads = 5 > 4 CPUs (SLURM_CPUS_PER_TASK)',
    );
  });

  it('shows an expression with its value and says where max came from', () => {
    const c = new Constraints({ cpus: { uses: 'num_workers * 2', max: 'cpus + 1' } }, slurm(2));
    assert.equal(c.check({ num_workers: 1 }), undefined, '2 + 1 main process = 3 fits in cpus + 1');
    assert.equal(
      c.check({ num_workers: 2 }),
      'CPU budget: (num_workers * 2 = 4) + 1 main process = 5 > 3 CPUs ' +
        '(cpus + 1, with 2 CPUs from SLURM_CPUS_PER_TASK)',
    );
    assert.equal(
      new Constraints({ cpus: { uses: 'num_workers', max: 2 } }).check({ num_workers: 2 }),
      'CPU budget: num_workers 2 + 1 main process = 3 > 2 CPUs (max)',
    );
  });
});
