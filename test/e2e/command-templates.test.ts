// End to end: an argparse script tuned through templates with defaults, optional arguments and a
// store_true flag, a max-batch stage before the sweep that varies num_workers, and the chosen
// values handed back as the script's own arguments (chosen-config.args) and a reproduce command.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { journal, runDir } from '../support/runs.js';
import { PYTHON, requireSystem } from '../support/system.js';

const SCRIPT = join(PROGRAMS, 'argparse_train.py');

interface Logged {
  argv: string[];
  parsed: { batch_size: number; num_workers: number; prefetch_factor: number | null; pin_memory: boolean; lr: number };
}
const logged = (file: string): Logged[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Logged);

describe('command templates on an argparse script', { skip: requireSystem('python3') }, () => {
  it('runs max-batch before a num_workers sweep, and the chosen arguments run the script', async () => {
    const dir = tempDir();
    const log = join(dir, 'argv.jsonl');
    const command = [
      SCRIPT,
      '--batch-size={batch_size}',
      '--num-workers={num_workers:-0}',
      '--prefetch-factor={prefetch_factor?}',
      '{pin_memory?--pin-memory}',
      '--lr={lr}',
    ];
    writeFileSync(
      join(dir, 'exp.yaml'),
      [
        'name: argparse-loader',
        'workload:',
        '  kind: command',
        `  python: ${PYTHON}`,
        `  command: ${JSON.stringify(command)}`,
        '  params: { lr: 0.1 }',
        `  env: { ARGV_LOG: ${JSON.stringify(log)} }`,
        '  protocol: required',
        'limits: { memory: 1GiB, mechanism: prlimit, timeout: 30s }',
        'measure: { warmup_steps: 0, steps: 3 }',
        'stages:',
        '  - { kind: max-batch, multiple_of: 8, ceiling: 256, ' +
          'steps: 1, confirm_steps: 1, throughput_points: 0, choose: max }',
        '  - kind: sweep',
        '    name: loader',
        '    params: { num_workers: [0, 1], prefetch_factor: [2, 4], pin_memory: [false, true] }',
        '    applies_when: { prefetch_factor: num_workers }',
        '    strategy: grid',
        '    repeats: 3',
        '',
      ].join('\n'),
    );
    const validate = await execa(process.execPath, [CLI, 'validate', join(dir, 'exp.yaml')], { reject: false });
    assert.equal(validate.exitCode, 0, validate.stderr);
    const out = tempDir();
    const r = await execa(process.execPath, [CLI, 'run', join(dir, 'exp.yaml'), '--out', out, '--json'], {
      reject: false,
    });
    assert.equal(r.exitCode, 0, r.stderr);
    const result = JSON.parse(r.stdout) as {
      chosen: Record<string, unknown>;
      failed_stages: string[];
      stages: { name: string; result: { max?: number } }[];
      files: Record<string, string>;
    };
    assert.deepEqual(result.failed_stages, []);
    const records = journal(runDir(out, 'argparse-loader'));
    assert.ok(
      records.every((t) => t.outcome === 'ok' || t.outcome === 'oom'),
      records.map((t) => `${t.outcome}: ${t.reason}`).join('\n'),
    );
    assert.ok(
      records.some((t) => t.outcome === 'oom'),
      'the cap set a max batch',
    );

    // What the script was given: the default while num_workers had no value, no --prefetch-factor
    // without workers (argparse would have exited 2), --pin-memory only when true.
    const calls = logged(log);
    assert.ok(
      calls.every((c) => !c.argv.some((a) => a.includes('{'))),
      'no placeholder reached the script',
    );
    assert.ok(
      calls.some((c) => c.argv.includes('--num-workers=0') && !c.argv.some((a) => a.startsWith('--prefetch-factor'))),
    );
    assert.ok(
      calls.some((c) => c.argv.includes('--pin-memory')) && calls.some((c) => !c.argv.includes('--pin-memory')),
    );
    assert.ok(calls.every((c) => c.parsed.num_workers > 0 || c.parsed.prefetch_factor === null));

    const max = result.stages[0]!.result.max!;
    // pin_memory measured faster here, but does nothing without a GPU: its twin with it off is chosen.
    assert.deepEqual(result.chosen, {
      lr: 0.1,
      batch_size: max,
      num_workers: 1,
      prefetch_factor: 4,
      pin_memory: false,
    });
    const argsFile = result.files['chosen_args']!;
    assert.equal(argsFile, join(runDir(out, 'argparse-loader'), 'chosen-config.args'));
    assert.equal(readFileSync(argsFile, 'utf8'), `--batch-size=${max} --num-workers=1 --prefetch-factor=4 --lr=0.1\n`);
    const expected = { batch_size: max, num_workers: 1, prefetch_factor: 4, pin_memory: false, lr: 0.1 };

    // The .args line as the README says to use it: eval "python train.py $(cat chosen-config.args)".
    const byArgs = join(tempDir(), 'argv.jsonl');
    execFileSync('bash', ['-c', 'eval "exec \\"$1\\" \\"$2\\" $(cat "$3")"', '_', PYTHON, SCRIPT, argsFile], {
      env: { ...process.env, ARGV_LOG: byArgs },
    });
    assert.deepEqual(logged(byArgs)[0]!.parsed, expected);

    // reproduce runs the training with the chosen config (not the tuning), in its cwd with its env.
    const chosen = JSON.parse(readFileSync(result.files['chosen_config']!, 'utf8')) as {
      reproduce: { command: string[]; cwd: string; env: Record<string, string> };
      retune: { command: string[] };
      args: string[];
    };
    assert.deepEqual(chosen.reproduce.command, [PYTHON, SCRIPT, ...chosen.args]);
    assert.equal(chosen.reproduce.cwd, dir);
    assert.equal(chosen.reproduce.env['TUNEBENCH_STEPS'], undefined, 'no measurement variables');
    assert.equal(chosen.reproduce.env['TUNEBENCH_PIN_MEMORY'], 'false');
    assert.deepEqual(chosen.retune.command.slice(0, 2), ['tunebench', 'run']);
    const [program, ...rest] = chosen.reproduce.command;
    execFileSync(program!, rest, {
      cwd: chosen.reproduce.cwd,
      env: { PATH: process.env['PATH'], ...chosen.reproduce.env },
    });
    assert.deepEqual(logged(log).at(-1)!.parsed, expected);
  });
});
