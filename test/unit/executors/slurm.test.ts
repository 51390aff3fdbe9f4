// Pure parts of the SLURM executor: array ranges, splits at MaxArraySize, squeue's task ids, sbatch
// resource arguments, and the per-device configuration matrix of a heterogeneous cluster.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deviceMatrix } from '../../../harness/engine/stages/device-matrix.js';
import { parseExperiment } from '../../../harness/experiment/schema.js';
import { expandTaskIds } from '../../../harness/executors/slurm/commands.js';
import { arrayRanges, resourceArgs, splitForArrays } from '../../../harness/executors/slurm/sbatch.js';
import type { TrialRecord } from '../../../harness/domain/index.js';

describe('slurm executor helpers', () => {
  it('writes task numbers as sbatch array ranges', () => {
    assert.equal(arrayRanges([0, 1, 2, 3]), '0-3');
    assert.equal(arrayRanges([5, 0, 1, 2, 7, 8, 2]), '0-2,5,7-8');
    assert.equal(arrayRanges([4]), '4');
  });

  it('splits arrays so that every index stays below MaxArraySize, with the offset of each part', () => {
    const tasks = Array.from({ length: 25 }, (_, i) => i);
    assert.deepEqual(
      splitForArrays(tasks, 10).map((c) => [c.offset, c.tasks.length, c.tasks[0], c.tasks.at(-1)]),
      [
        [0, 10, 0, 9],
        [10, 10, 10, 19],
        [20, 5, 20, 24],
      ],
    );
    // A retry of tasks 3 and 17 goes out as two parts: indices 3 (offset 0) and 7 (offset 10).
    assert.deepEqual(splitForArrays([17, 3], 10), [
      { offset: 0, tasks: [3] },
      { offset: 10, tasks: [17] },
    ]);
    assert.deepEqual(splitForArrays([0, 1, 2], 1001), [{ offset: 0, tasks: [0, 1, 2] }]);
  });

  it("expands squeue's pending ranges into one id per task", () => {
    assert.deepEqual(expandTaskIds('122_[1,4-5%1]'), ['122_1', '122_4', '122_5']);
    assert.deepEqual(expandTaskIds('122_[3-4]'), ['122_3', '122_4']);
    assert.deepEqual(expandTaskIds('122_0'), ['122_0']);
  });

  it('passes every sbatch option through as its own argument', () => {
    const parsed = parseExperiment({
      name: 'x',
      workload: { kind: 'command', command: ['true'] },
      executor: {
        kind: 'slurm',
        partition: 'gpu',
        account: 'ml-perf',
        gres: 'gpu:a100:1',
        cpus_per_task: 8,
        mem: '64G',
        time: '00:30:00',
        constraint: 'a100|h100',
        extra_args: ['--qos=high', '--exclusive'],
      },
      stages: [{ kind: 'sweep', params: { a: [1, 2] } }],
    });
    assert.ok(parsed.ok, JSON.stringify(parsed));
    const exp = parsed.value;
    assert.deepEqual(resourceArgs(exp.executor), [
      '--partition=gpu',
      '--account=ml-perf',
      '--gres=gpu:a100:1',
      '--cpus-per-task=8',
      '--mem=64G',
      '--time=00:30:00',
      '--constraint=a100|h100',
      '--qos=high',
      '--exclusive',
    ]);
    assert.equal(exp.executor.max_concurrent, 4);
    assert.equal(exp.executor.retries, 1);
    // A max-batch stage's own constraint replaces the executor's for its allocation.
    const stage = resourceArgs(exp.executor, 'gpu40');
    assert.deepEqual(
      stage.filter((a) => a.startsWith('--constraint')),
      ['--constraint=gpu40'],
    );
  });
});

describe('configuration matrix per device class', () => {
  const rec = (i: number, device: string, host: string, workers: number, seconds: number): TrialRecord =>
    ({
      v: 1,
      index: i,
      stage: 'loader',
      role: 'grid',
      config: { batch_size: 64, num_workers: workers },
      outcome: 'ok',
      steps: [0, 1, 2, 3].map((s) => ({ samples: 64, seconds: seconds * (1 + 0.002 * s) })),
      node: { host, device, slurm_job: `7_${i}` },
    }) as unknown as TrialRecord;
  const keyOf = (c: Record<string, unknown>) => `num_workers=${String(c['num_workers'])}`;

  it('ranks each GPU type on its own trials: A100 nodes prefer 8 workers, T4 nodes 2', () => {
    const records: TrialRecord[] = [];
    let i = 0;
    for (let rep = 0; rep < 3; rep++) {
      // On the A100 the loader is the bottleneck: more workers help a lot.
      records.push(
        rec(i++, 'NVIDIA A100-SXM4-80GB', `a${rep}`, 2, 0.1),
        rec(i++, 'NVIDIA A100-SXM4-80GB', `a${rep}`, 8, 0.05),
      );
      // On the T4 compute dominates: 8 workers buy nothing, so the cheaper 2 wins the tie.
      records.push(rec(i++, 'Tesla T4', 't0', 2, 0.2), rec(i++, 'Tesla T4', 't0', 8, 0.2));
    }
    const m = deviceMatrix(records, keyOf, ['num_workers']);
    assert.deepEqual(
      m.map((d) => [d.device, d.chosen_key, d.hosts, d.trials]),
      [
        ['NVIDIA A100-SXM4-80GB', 'num_workers=8', ['a0', 'a1', 'a2'], 6],
        ['Tesla T4', 'num_workers=2', ['t0'], 6],
      ],
    );
    assert.ok(m[0]!.throughput!.estimate > 1200 && m[0]!.throughput!.estimate < 1300);
    // A100: 8 workers are significantly faster (Welch); T4: the two tie, and the cheaper one is chosen.
    assert.match(m[0]!.note!, /num_workers=8 is significantly faster than every other config/);
    assert.match(
      m[1]!.note!,
      /2 configs are not significantly different from the best .*chose the cheapest, num_workers=2/,
    );
  });

  it('is empty for trials that ran here (no node)', () => {
    const local = { ...rec(0, 'x', 'h', 2, 0.1) } as Partial<TrialRecord>;
    delete local.node;
    assert.deepEqual(deviceMatrix([local as TrialRecord], keyOf, []), []);
  });
});
