// workload.launcher: the command workload run as N ranks under torch.distributed.run, and its schema.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../harness/errors.js';
import { CommandWorkload, type CommandSpec } from '../../../harness/workloads/command/workload.js';
import { parseExperimentText } from '../../../harness/engine/load.js';

const measure = { warmupSteps: 1, steps: 2 };
const workload = (extra: Partial<CommandSpec> = {}) =>
  new CommandWorkload(
    {
      kind: 'command',
      command: ['train.py', '--bs={batch_size}'],
      python: '/usr/bin/python3',
      launcher: { kind: 'torchrun', nproc_per_node: 2 },
      ...extra,
    },
    '/jobs',
  );

describe('command workload with workload.launcher: torchrun', () => {
  it('runs each trial as N ranks of the whole command, on a rendezvous port the kernel picks', () => {
    const c = workload().command({ batch_size: 8 }, measure);
    assert.deepEqual(c.argv.slice(0, 9), [
      '/usr/bin/python3',
      '-m',
      'torch.distributed.run',
      '--nnodes=1',
      '--nproc_per_node=2',
      '--redirects=1',
      '--tee=1',
      '--rdzv_backend=c10d',
      '--rdzv_endpoint=127.0.0.1:0',
    ]);
    assert.ok(!c.argv.includes('--standalone'), '--standalone fixes port 29400: two runs at once would meet');
    const rest = c.argv.slice(c.argv.indexOf('--no_python') + 1);
    assert.deepEqual(rest, ['/usr/bin/python3', 'train.py', '--bs=8']);
    assert.equal(c.ranks, 2);
    assert.equal(c.env['TUNEBENCH_RANKS'], '2');
    assert.equal(c.env['TUNEBENCH_BATCH_SIZE'], '8');
    assert.equal(c.launcherField, 'workload.python');
  });

  it('gives each trial its own log directory, which the harness removes after it', () => {
    const w = workload();
    const [a, b] = [w.command({ batch_size: 8 }, measure), w.command({ batch_size: 8 }, measure)];
    assert.equal(a.cleanup?.length, 1);
    assert.ok(a.argv.includes(`--log_dir=${a.cleanup[0]!}`));
    assert.notEqual(a.cleanup[0], b.cleanup![0]);
  });

  it('runs torch.distributed.run under launcher.python, else torchrun from PATH', () => {
    const own = workload({ launcher: { kind: 'torchrun', nproc_per_node: 4, python: '/opt/venv/bin/python' } });
    const c = own.command({ batch_size: 8 }, measure);
    assert.deepEqual(c.argv.slice(0, 3), ['/opt/venv/bin/python', '-m', 'torch.distributed.run']);
    assert.ok(c.argv.includes('--nproc_per_node=4'));
    assert.equal(c.launcherField, 'workload.launcher.python');
    const bare = new CommandWorkload(
      { kind: 'command', command: ['./train', '{batch_size}'], launcher: { kind: 'torchrun', nproc_per_node: 2 } },
      '/jobs',
    ).command({ batch_size: 8 }, measure);
    assert.equal(bare.argv[0], 'torchrun');
    assert.deepEqual(bare.argv.slice(-3), ['--no_python', './train', '8']);
    assert.equal(bare.launcherField, 'torchrun on PATH');
  });

  it("wraps a claim's own command too, and never forks from a warm server", () => {
    const c = workload({ warm_start: 'fork' }).command({ batch_size: 8 }, measure, ['other.py', '{batch_size}']);
    assert.deepEqual(c.argv.slice(-3), ['/usr/bin/python3', 'other.py', '8']);
    assert.equal(c.argv[2], 'torch.distributed.run');
    assert.equal(c.warm, undefined);
  });

  it('leaves a workload without a launcher as one process', () => {
    const c = workload({ launcher: undefined }).command({ batch_size: 8 }, measure);
    assert.deepEqual(c.argv, ['/usr/bin/python3', 'train.py', '--bs=8']);
    assert.equal(c.ranks, undefined);
    assert.equal(c.env['TUNEBENCH_RANKS'], undefined);
  });

  it('reproduces the chosen config with torchrun --standalone, the same ranks and no protocol variables', () => {
    const t = workload().training({ batch_size: 8 });
    assert.deepEqual(t.argv, [
      '/usr/bin/python3',
      '-m',
      'torch.distributed.run',
      '--standalone',
      '--nnodes=1',
      '--nproc_per_node=2',
      '--redirects=1',
      '--tee=1',
      '--no_python',
      '/usr/bin/python3',
      'train.py',
      '--bs=8',
    ]);
    assert.deepEqual(t.args, ['--bs=8']);
    assert.equal(t.env['TUNEBENCH_RANKS'], undefined);
  });
});

function issues(workloadYaml: string): string[] {
  try {
    parseExperimentText(
      `name: t\nworkload: ${workloadYaml}\nlimits: { memory: 2GiB }\nstages: [{ kind: max-batch }]\n`,
      '/x/exp.yaml',
    );
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}

describe('workload.launcher in the experiment file', () => {
  const base = 'kind: command, command: [train.py, "--bs={batch_size}"], python: /usr/bin/python3';

  it('accepts torchrun with a rank count and an interpreter', () => {
    assert.deepEqual(issues(`{ ${base}, launcher: { kind: torchrun, nproc_per_node: 2 } }`), []);
    assert.deepEqual(
      issues(`{ ${base}, launcher: { kind: torchrun, nproc_per_node: 8, python: /opt/venv/bin/python } }`),
      [],
    );
  });

  it('refuses a rank count that is not a positive integer, another kind, and unknown keys', () => {
    const zero = issues(`{ ${base}, launcher: { kind: torchrun, nproc_per_node: 0 } }`);
    assert.equal(zero.length, 1);
    assert.match(zero[0]!, /^workload\.launcher\.nproc_per_node: expected a positive integer, got 0/);
    const kind = issues(`{ ${base}, launcher: { kind: mpirun, nproc_per_node: 2 } }`);
    assert.equal(kind.length, 1);
    assert.match(kind[0]!, /^workload\.launcher\.kind: .*torchrun/);
    const key = issues(`{ ${base}, launcher: { kind: torchrun, nproc_per_node: 2, nnodes: 2 } }`);
    assert.equal(key.length, 1);
    assert.match(key[0]!, /^workload\.launcher.*nnodes/);
  });

  it('refuses warm_start: fork with a launcher, naming both fields and the fix', () => {
    assert.deepEqual(issues(`{ ${base}, warm_start: fork, launcher: { kind: torchrun, nproc_per_node: 2 } }`), [
      'workload.warm_start: fork cannot be used with workload.launcher: a trial of N ranks is started by ' +
        'torch.distributed.run, not forked from a warm server; remove warm_start (or set it to off), ' +
        'or remove workload.launcher',
    ]);
    assert.deepEqual(issues(`{ ${base}, warm_start: off, launcher: { kind: torchrun, nproc_per_node: 2 } }`), []);
  });
});
