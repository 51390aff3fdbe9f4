// A `tunebench time` run against a saved baseline: commands matched by label, the speed-up as the
// unpaired Welch ratio of runs/s (exact where the runs do not vary), and the verdicts of the noise band.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { baselineOf, baselineVerdict, compareWithBaseline } from '../../../harness/analysis/time-baseline.js';
import type { TimedCommand, TimeSummary } from '../../../harness/analysis/time-summary.js';
import { welchRatioInterval } from '../../../harness/stats/log-ratio.js';
import type { Fingerprint, LogInterval } from '../../../harness/domain/index.js';

const env = {
  host: 'node1',
  os: 'Debian',
  kernel: '6.1.0',
  cpu: { model: 'AMD EPYC', cores: 2 },
  memory_bytes: 2 ** 34,
  gpu: null,
  versions: { node: '20.20.0' },
  git_commit: null,
} satisfies Fingerprint;

/** A command of a summary: only what the baseline reads (label, timing, times). */
function command(label: string, seconds: (number | null)[]): TimedCommand {
  return {
    label,
    timing: 'process',
    times: seconds.map((s) => ({ seconds: s, exit_code: s === null ? 1 : 0, outcome: s === null ? 'crash' : 'ok' })),
  } as TimedCommand;
}
const summary = (commands: TimedCommand[]): TimeSummary => ({ mode: 'compare', run_dir: '/r', commands, findings: [] });
const saved = (commands: TimedCommand[]) =>
  baselineOf(summary(commands), {
    name: 'main',
    command_line: 'tunebench time',
    run_id: 'r1',
    environment: env,
    saved_at: 't',
  });
const ci = (low: number, high: number) => ({ estimate: (low + high) / 2, low, high }) as LogInterval;

describe('time baselines', () => {
  it('store only the runs that exited 0', () => {
    const b = saved([command('a', [0.1, null, 0.3])]);
    assert.deepEqual(b.commands, [{ label: 'a', timing: 'process', times: [0.1, 0.3] }]);
  });

  it('match commands by label and name the ones on one side only', () => {
    const c = compareWithBaseline(
      saved([command('a', [0.1, 0.1, 0.1]), command('gone', [0.1, 0.1, 0.1])]),
      summary([command('a', [0.2, 0.2, 0.2]), command('new', [0.1, 0.1, 0.1])]),
      env,
    );
    assert.deepEqual(
      c.rows.map((r) => r.label),
      ['a'],
    );
    assert.deepEqual(c.not_in_baseline, ['new']);
    assert.deepEqual(c.not_run_today, ['gone']);
    assert.deepEqual(c.environment, []);
    // Twice as long a run today: a speed-up of exactly 0.5 (no spread), slower.
    const row = c.rows[0]!;
    assert.ok(Math.abs(row.speedup!.estimate - 0.5) < 1e-12, String(row.speedup!.estimate));
    assert.equal(row.speedup!.low, row.speedup!.high);
    assert.equal(row.speedup!.method, 'welch-log-t');
    assert.equal(row.verdict, 'slower');
    assert.deepEqual(row.median, { baseline: 0.1, today: 0.2 });
  });

  it('use the Welch ratio of runs/s that compare uses, and say undecided below 3 runs', () => {
    const before = [0.1, 0.12, 0.11, 0.105];
    const after = [0.1, 0.102, 0.098, 0.101];
    const c = compareWithBaseline(
      saved([command('a', before)]),
      summary([command('a', after), command('b', [1])]),
      env,
    );
    assert.deepEqual(
      c.rows[0]!.speedup,
      welchRatioInterval(
        before.map((s) => 1 / s),
        after.map((s) => 1 / s),
        0.05,
      ),
    );
    const few = compareWithBaseline(saved([command('a', [0.1, 0.1])]), summary([command('a', [0.1, 0.1, 0.1])]), env);
    assert.equal(few.rows[0]!.speedup, null);
    assert.equal(few.rows[0]!.verdict, 'undecided');
  });

  it('give a verdict from the CI and the noise band', () => {
    assert.equal(baselineVerdict(ci(1.05, 1.2), 0.02), 'faster');
    assert.equal(baselineVerdict(ci(0.8, 0.97), 0.02), 'slower');
    assert.equal(baselineVerdict(ci(0.99, 1.015), 0.02), 'no significant difference');
    // Significant (the CI excludes 1) but not clear of the band: undecided, as a compare stage says.
    assert.equal(baselineVerdict(ci(1.005, 1.06), 0.02), 'undecided');
    assert.equal(baselineVerdict(ci(0.9, 1.1), 0.02), 'undecided');
    assert.equal(baselineVerdict(null, 0.02), 'undecided');
  });

  it('report every field of the environment that differs', () => {
    const c = compareWithBaseline(saved([command('a', [0.1, 0.1, 0.1])]), summary([command('a', [0.1, 0.1, 0.1])]), {
      ...env,
      host: 'node2',
      versions: { node: '22.0.0' },
    });
    assert.deepEqual(
      c.environment.map((d) => [d.field, d.name]),
      [
        ['host', undefined],
        ['version', 'node'],
      ],
    );
    assert.equal(c.rows[0]!.verdict, 'no significant difference');
  });
});
