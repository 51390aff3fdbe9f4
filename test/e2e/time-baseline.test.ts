// `tunebench time --save-baseline NAME` / `--baseline NAME` on real commands: a round trip against a
// planted slowdown (the same command line, reading its sleep from a file), the commands that do not
// match, a missing name, a damaged file and an environment that differs.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, tempDir } from '../support/paths.js';

const SLOW = 'sleep $(cat d)';

/** `tunebench time --shell sh --runs 5 ...` in `cwd`, with its reports in <cwd>/reports. */
const time = (cwd: string, args: string[]) =>
  execa(process.execPath, [CLI, 'time', '--shell', 'sh', '--runs', '5', '--out', join(cwd, 'reports'), ...args], {
    cwd,
    reject: false,
  });
const runDirOf = (stdout: string) => /run directory: (.+)/.exec(stdout)?.[1]?.trim() ?? '';

interface Comparison {
  unpaired: boolean;
  rows: {
    label: string;
    runs: { baseline: number; today: number };
    speedup: { estimate: number; low: number; high: number } | null;
    verdict: string;
  }[];
  not_in_baseline: string[];
  not_run_today: string[];
  environment: { field: string; name?: string }[];
}
const comparisonOf = (stdout: string) =>
  JSON.parse(readFileSync(join(runDirOf(stdout), 'baseline-comparison.json'), 'utf8')) as Comparison;

describe('tunebench time with saved baselines', { timeout: 3 * 60_000 }, () => {
  it('saves the per-run times and finds a planted slowdown against them, unpaired', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'd'), '0.02');
    const save = await time(cwd, ['--save-baseline', 'main', SLOW, 'sleep 0.01']);
    assert.equal(save.exitCode, 0, save.stderr);
    assert.match(save.stderr, /saved baseline main: .*reports\/baselines\/main\.json/);
    const file = join(cwd, 'reports', 'baselines', 'main.json');
    const saved = JSON.parse(readFileSync(file, 'utf8')) as {
      commands: { label: string; times: number[] }[];
      environment: { host: string };
    };
    assert.deepEqual(
      saved.commands.map((c) => [c.label, c.times.length]),
      [
        [SLOW, 5],
        ['sleep 0.01', 5],
      ],
    );
    // A run's time is its process's window: at least the sleep.
    assert.ok(
      saved.commands[0]!.times.every((t) => t >= 0.02 && t < 1),
      JSON.stringify(saved.commands[0]),
    );
    assert.equal(typeof saved.environment.host, 'string');

    // The same command line, four times slower now; a third command the baseline never saw.
    writeFileSync(join(cwd, 'd'), '0.08');
    const r = await time(cwd, ['--baseline', 'main', SLOW, 'sleep 0.01', 'sleep 0.03']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(
      r.stdout,
      /against baseline main \(saved .*\): unpaired, the saved runs and today's were not interleaved/,
    );
    assert.match(
      r.stdout,
      /sleep \$\(cat d\): [\d.]+ ms saved \(5 runs\) -> [\d.]+ ms today \(5 runs\); 0\.\d\dx \[0\.\d\dx, 0\.\d\dx\] as fast as saved: slower/,
    );
    assert.match(r.stdout, /not in baseline main: sleep 0\.03 \(commands must match the saved ones exactly; saved: /);
    assert.doesNotMatch(r.stdout, /environment differs/);
    const c = comparisonOf(r.stdout);
    assert.equal(c.unpaired, true);
    const slow = c.rows.find((row) => row.label === SLOW)!;
    assert.equal(slow.verdict, 'slower');
    assert.ok(slow.speedup && slow.speedup.estimate < 0.8, JSON.stringify(slow.speedup));
    assert.deepEqual(
      c.rows.map((row) => row.label),
      [SLOW, 'sleep 0.01'],
    );
    assert.deepEqual(c.not_in_baseline, ['sleep 0.03']);
    assert.deepEqual(c.not_run_today, []);

    // A name never saved is refused before anything runs, naming the saved ones.
    const missing = await time(cwd, ['--baseline', 'mian', 'sleep 0.01']);
    assert.equal(missing.exitCode, 2);
    assert.match(
      missing.stderr,
      /--baseline mian: no saved baseline of that name .*saved under .*: main; save one with/,
    );
    assert.equal(runDirOf(missing.stdout), '');

    // Another host and CPU in the saved fingerprint: the comparison goes ahead with a warning.
    const moved = JSON.parse(readFileSync(file, 'utf8')) as { environment: { host: string; cpu: { model: string } } };
    moved.environment.host = 'elsewhere';
    moved.environment.cpu.model = 'Other CPU';
    writeFileSync(join(cwd, 'reports', 'baselines', 'moved.json'), JSON.stringify({ ...moved, name: 'moved' }));
    const env = await time(cwd, ['--runs', '3', '--baseline', 'moved', 'sleep 0.01']);
    assert.equal(env.exitCode, 0, env.stderr);
    assert.match(env.stdout, /warning: the environment differs from the baseline's .*host differs: "elsewhere" before/);
    assert.deepEqual(
      comparisonOf(env.stdout).environment.map((d) => d.field),
      ['host', 'CPU'],
    );
    assert.deepEqual(comparisonOf(env.stdout).not_run_today, [SLOW]);
  });

  it('refuses a damaged or foreign baseline file, naming the file and the field, before running', async () => {
    const cwd = tempDir();
    const dir = join(cwd, 'reports', 'baselines');
    const save = await time(cwd, ['--runs', '3', '--save-baseline', 'ok', 'sleep 0.01']);
    assert.equal(save.exitCode, 0, save.stderr);
    const good = JSON.parse(readFileSync(join(dir, 'ok.json'), 'utf8')) as { commands: { times: unknown[] }[] };
    good.commands[0]!.times[1] = 'fast';
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...good, name: 'bad' }, null, 2));
    const bad = await time(cwd, ['--baseline', 'bad', 'sleep 0.01']);
    assert.equal(bad.exitCode, 2);
    assert.match(
      bad.stderr,
      /baselines\/bad\.json:\d+: a saved time baseline does not have the shape tunebench writes at field "commands\[0\]\.times\[1\]"/,
    );
    assert.match(bad.stderr, /save it again with tunebench time --save-baseline bad/);
    writeFileSync(join(dir, 'cut.json'), '{"tunebench_time_baseline": 1, "name": "cut", "comm');
    const cut = await time(cwd, ['--baseline', 'cut', 'sleep 0.01']);
    assert.equal(cut.exitCode, 2);
    assert.match(cut.stderr, /baselines\/cut\.json:1: a saved time baseline is damaged: not valid JSON/);
    const named = await time(cwd, ['--baseline', '../ok', 'sleep 0.01']);
    assert.equal(named.exitCode, 2);
    assert.match(named.stderr, /--baseline "\.\.\/ok": a baseline name is letters, digits/);
    // Nothing ran for the refused ones: the only run directory is the one that saved "ok".
    assert.equal(existsSync(join(cwd, 'reports', 'time')), true);
    for (const r of [bad, cut, named]) assert.equal(runDirOf(r.stdout), '');
  });
});
