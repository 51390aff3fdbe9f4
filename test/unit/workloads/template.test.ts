// Argument templates: required, default, optional and flag placeholders, and the program part of a command.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandWorkload } from '../../../harness/workloads/command/workload.js';
import { expandArg, expandArgs, placeholders, programLength } from '../../../harness/workloads/command/template.js';

describe('argument templates', () => {
  it('parses the four forms', () => {
    assert.deepEqual(
      placeholders('{a}{b:-2}{c?}{d?--pin-memory}').map((p) => [p.name, p.form, p.text]),
      [
        ['a', 'required', undefined],
        ['b', 'default', '2'],
        ['c', 'optional', undefined],
        ['d', 'flag', '--pin-memory'],
      ],
    );
    assert.deepEqual(placeholders('{"a": 1} {not a name}'), [], 'JSON and prose are not placeholders');
  });

  it('fills a required value and names the argument when there is none', () => {
    assert.equal(expandArg('--bs={batch_size}', { batch_size: 64 }), '--bs=64');
    assert.throws(
      () => expandArg('--num-workers={num_workers}', {}),
      /argument "--num-workers=\{num_workers\}" uses \{num_workers\}, which has no value in this config; give it a default \{num_workers:-value\} or make it optional \{num_workers\?\}/,
    );
  });

  it('uses a default as text only when the config has no value', () => {
    assert.equal(expandArg('--num-workers={num_workers:-2}', {}), '--num-workers=2');
    assert.equal(expandArg('--num-workers={num_workers:-2}', { num_workers: 0 }), '--num-workers=0');
    assert.equal(expandArg('--tag={tag:-}', {}), '--tag=', 'an empty default');
  });

  it('leaves out an optional argument without a value, and the bare option before it', () => {
    assert.deepEqual(expandArgs(['--prefetch-factor={prefetch_factor?}', '--x'], {}), ['--x']);
    assert.deepEqual(expandArgs(['--prefetch-factor={prefetch_factor?}'], { prefetch_factor: 4 }), [
      '--prefetch-factor=4',
    ]);
    assert.deepEqual(expandArgs(['train.py', '--prefetch-factor', '{prefetch_factor?}', '--lr', '{lr}'], { lr: 0.1 }), [
      'train.py',
      '--lr',
      '0.1',
    ]);
    assert.deepEqual(expandArgs(['train.py', '--prefetch-factor', '{prefetch_factor?}'], { prefetch_factor: 2 }), [
      'train.py',
      '--prefetch-factor',
      '2',
    ]);
    assert.deepEqual(
      expandArgs(['--mode=fast', '{extra?}'], {}),
      ['--mode=fast'],
      'an option with its own value stays',
    );
  });

  it(
    'turns a flag on for true, "true" and 1, ' + 'off for false, "false", 0 and no value, and refuses anything else',
    () => {
      for (const v of [true, 'true', 1])
        assert.deepEqual(expandArgs(['{pin_memory?--pin-memory}'], { pin_memory: v }), ['--pin-memory'], String(v));
      for (const v of [false, 'false', 0, undefined])
        assert.deepEqual(
          expandArgs(['a', '{pin_memory?--pin-memory}'], v === undefined ? {} : { pin_memory: v }),
          ['a'],
          String(v),
        );
      assert.throws(
        () => expandArgs(['{pin_memory?--pin-memory}'], { pin_memory: 'yes' }),
        /argument "\{pin_memory\?--pin-memory\}" is the flag \{pin_memory\?--pin-memory\}: \{pin_memory\} must be true or false \(or 1\/0\), got "yes"/,
      );
    },
  );

  it('finds the program part: leading arguments without parameters, not the option of a separate value', () => {
    assert.equal(programLength(['train.py', '--bs={batch_size}']), 1);
    assert.equal(programLength(['{python}', 'train.py', '--epochs', '1', '--bs={batch_size}']), 4);
    assert.equal(programLength(['python3', '-m', 'trainer', '--bs', '{batch_size}']), 3);
    assert.equal(programLength(['./run.sh']), 1);
  });
});

describe('the command workload with templates', () => {
  const workload = new CommandWorkload(
    {
      kind: 'command',
      python: '/usr/bin/python3',
      command: [
        'train.py',
        '--batch-size={batch_size}',
        '--num-workers={num_workers:-0}',
        '--prefetch-factor={prefetch_factor?}',
        '{pin_memory?--pin-memory}',
        '--note={note}',
      ],
      env: { LEVEL: '{level?}', FIXED: 'x' },
    },
    '/jobs',
  );

  it(
    'runs a trial with what the config has: defaults filled, ' +
      'optional and false flags left out, the config untouched',
    () => {
      const t = workload.command({ batch_size: 8, note: "it's $HOME" }, { warmupSteps: 1, steps: 2 });
      assert.deepEqual(t.argv, [
        '/usr/bin/python3',
        'train.py',
        '--batch-size=8',
        '--num-workers=0',
        "--note=it's $HOME",
      ]);
      assert.equal(
        t.env['TUNEBENCH_CONFIG'],
        JSON.stringify({ batch_size: 8, note: "it's $HOME" }),
        'a default does not enter the config',
      );
      assert.equal(t.env['TUNEBENCH_NUM_WORKERS'], undefined);
      assert.equal(t.env['FIXED'], 'x');
      assert.ok(!('LEVEL' in t.env), 'an optional variable without a value is not set');
      assert.equal(t.cwd, '/jobs');
    },
  );

  it(
    'gives the training command and its arguments without the interpreter and script, ' +
      'and no measurement variables',
    () => {
      const t = workload.training({
        batch_size: 64,
        num_workers: 2,
        prefetch_factor: 4,
        pin_memory: true,
        note: 'n',
        level: 'NVL',
      });
      assert.deepEqual(t.args, [
        '--batch-size=64',
        '--num-workers=2',
        '--prefetch-factor=4',
        '--pin-memory',
        '--note=n',
      ]);
      assert.deepEqual(t.argv, ['/usr/bin/python3', 'train.py', ...t.args]);
      assert.equal(t.env['LEVEL'], 'NVL');
      assert.equal(t.env['TUNEBENCH_BATCH_SIZE'], '64');
      assert.equal(t.env['TUNEBENCH_STEPS'], undefined);
      assert.match(t.env['PYTHONPATH']!, /harness\/workloads\/python/);
    },
  );
});
