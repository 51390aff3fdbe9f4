// The experiments that `tunebench time` and `tunebench claim` build: checked by the experiment schema.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scanValues } from '../../../harness/experiment/one-liner.js';
import { joinScanFlags } from '../../../harness/experiment/time-flags.js';
import { claimExperiment, timeExperiment } from '../../../harness/engine/load.js';

const base = { warmup: 0, name: 'time', scans: [] };

describe('tunebench time: the experiment', () => {
  it('one command: a grid of one config, 10 runs by default', () => {
    const { experiment, mode } = timeExperiment({ ...base, commands: ['sleep 0.1'] });
    assert.equal(mode, 'single');
    const stage = experiment.stages[0]!;
    assert.equal(stage.kind, 'sweep');
    assert.equal(stage.kind === 'sweep' && stage.repeats, 10);
    assert.deepEqual(experiment.workload.kind === 'command' && experiment.workload.command, ['sleep', '0.1']);
  });

  it('several commands: a compare whose arms carry their own commands, the first the baseline', () => {
    const { experiment, mode } = timeExperiment({ ...base, commands: ['sleep 0.1', "python -c 'x'", 'sleep 0.1'] });
    assert.equal(mode, 'compare');
    const stage = experiment.stages[0]!;
    assert.ok(stage.kind === 'compare');
    assert.deepEqual(stage.arms, ['sleep 0.1', "python -c 'x'", 'sleep 0.1 #2']);
    assert.deepEqual(stage.commands, {
      'sleep 0.1': ['sleep', '0.1'],
      "python -c 'x'": ['python', '-c', 'x'],
      'sleep 0.1 #2': ['sleep', '0.1'],
    });
    assert.equal(stage.baseline ?? stage.arms[0], 'sleep 0.1');
    assert.deepEqual([stage.repeats, stage.max_rounds], [6, 20]);
    const fixed = timeExperiment({ ...base, commands: ['a', 'b'], runs: 8, warmup: 2 }).experiment.stages[0]!;
    assert.ok(fixed.kind === 'compare');
    assert.deepEqual([fixed.repeats, fixed.max_rounds, fixed.warmup_trials], [8, 8, 2]);
  });

  it('-L: a race over the values, numbers kept as numbers; --shell and --prepare reach the workload', () => {
    const { experiment, mode } = timeExperiment({
      ...base,
      shell: ['/bin/sh'],
      prepare: 'rm -f /tmp/x.{workers}',
      commands: ['python train.py --num-workers {workers} | tail -1'],
      scans: [{ name: 'workers', values: ['0,2,4'] }],
    });
    assert.equal(mode, 'scan');
    const stage = experiment.stages[0]!;
    assert.ok(stage.kind === 'sweep');
    assert.deepEqual(stage.params, { workers: [0, 2, 4] });
    assert.equal(stage.strategy, 'race');
    assert.ok(experiment.workload.kind === 'command');
    assert.deepEqual(experiment.workload.command, [
      '/bin/sh',
      '-c',
      'python train.py --num-workers {workers} | tail -1',
    ]);
    assert.deepEqual(experiment.workload.prepare, ['/bin/sh', '-c', 'rm -f /tmp/x.{workers}']);
  });

  it('refuses what cannot be meant, naming the flag and the fix', () => {
    assert.throws(
      () => timeExperiment({ ...base, commands: ['python t.py'], scans: [{ name: 'workers', values: ['1,2'] }] }),
      /-L workers: the command does not use \{workers\}.*--workers \{workers\}/,
    );
    assert.throws(
      () => timeExperiment({ ...base, commands: ['a {x}', 'b {x}'], scans: [{ name: 'x', values: ['1,2'] }] }),
      /-L scans one command template, got 2 commands/,
    );
    assert.throws(
      () => timeExperiment({ ...base, commands: ['a', 'b'], runs: 2 }),
      /--runs: expected an integer of at least 3/,
    );
    assert.throws(() => timeExperiment({ ...base, commands: ['a | b'] }), /command 1: .*add --shell/);
    assert.throws(() => timeExperiment({ ...base, commands: ['a'], timeout: 'soon' }), /--timeout|limits/);
    assert.throws(() => scanValues('w', '1,,2'), /an empty value/);
    assert.throws(() => scanValues('w', '1,2,1'), /the value 1 is given twice/);
    assert.deepEqual(scanValues('w', 'a, 2 ,0.5,05,1.50'), ['a', 2, 0.5, '05', '1.50']);
  });
});

describe('tunebench claim: the experiment', () => {
  it('one claim stage on two commands, with no batch size needed', () => {
    const e = claimExperiment({ ...base, name: 'claim', claim: '2-3x', baseline: 'sleep 0.2', candidate: 'sleep 0.1' });
    const stage = e.stages[0]!;
    assert.ok(stage.kind === 'claim');
    assert.deepEqual(
      [stage.baseline_command, stage.candidate_command],
      [
        ['sleep', '0.2'],
        ['sleep', '0.1'],
      ],
    );
  });

  it('refuses the same command twice and a claim it cannot read, in the words of the command line', () => {
    const same = { ...base, name: 'claim', claim: '2x', baseline: 'sleep  1', candidate: "sleep '1'" };
    assert.throws(() => claimExperiment(same), /--baseline and --candidate are the same command/);
    const bad = { ...base, name: 'claim', claim: 'much faster', baseline: 'a', candidate: 'b' };
    assert.throws(() => claimExperiment(bad), /invalid arguments[\s\S]*the claim: /);
  });
});

describe('joinScanFlags', () => {
  const argv = (...a: string[]) => ['node', 'main.js', ...a];
  it('joins -L name values into one option value, in the time command only', () => {
    assert.deepEqual(joinScanFlags(argv('time', '-L', 'w', '0,2', 'cmd {w}')), argv('time', '-L', 'w=0,2', 'cmd {w}'));
    assert.deepEqual(
      joinScanFlags(argv('time', '--parameter-list', 'w', '1', '-L', 'v=a,b', 'c')),
      argv('time', '--parameter-list', 'w=1', '-L', 'v=a,b', 'c'),
    );
    assert.deepEqual(joinScanFlags(argv('run', '-L', 'w', '0')), argv('run', '-L', 'w', '0'));
    assert.deepEqual(joinScanFlags(argv('time', '--', '-L', 'w', '0')), argv('time', '--', '-L', 'w', '0'));
    assert.throws(() => joinScanFlags(argv('time', 'cmd', '-L', 'w')), /-L w: give the values too/);
  });
});
