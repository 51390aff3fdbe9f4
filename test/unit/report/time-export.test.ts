// The --export-* writers of `tunebench time`: hyperfine's JSON and CSV layouts (as hyperfine 1.15
// writes them), the AsciiDoc and Org tables, --time-unit and --sort, on a summary with known figures.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TimedCommand, TimeSummary } from '../../../harness/analysis/time-summary.js';
import {
  timeAsciidoc,
  timeCsv,
  timeJson,
  timeOrgmode,
  type ExportContext,
} from '../../../harness/report/time-export.js';
import { fmtDuration, sortedSummary, timeText } from '../../../harness/report/time.js';

function command(label: string, config: TimedCommand['config'], times: TimedCommand['times']): TimedCommand {
  const ok = times.filter((t) => t.seconds !== null).map((t) => t.seconds!);
  const mean = ok.reduce((a, b) => a + b, 0) / ok.length;
  return {
    label,
    config,
    runs: ok.length,
    failed_every_run: ok.length === 0,
    failures: times.some((t) => t.outcome !== 'ok') ? { crash: times.filter((t) => t.outcome !== 'ok').length } : {},
    timing: 'process',
    wall:
      ok.length === 0
        ? null
        : { median: [...ok].sort()[1]!, ci: null, min: Math.min(...ok), max: Math.max(...ok), mean, stddev: 0.01 },
    user: ok.length ? 0.002 : null,
    system: ok.length ? 0.001 : null,
    times,
    samples_per_second: null,
    verdict: ok.length ? 'best' : 'failed',
    speedup: null,
    why: 'known',
  };
}

const run = (seconds: number | null, exit_code = 0) => ({
  seconds,
  exit_code,
  outcome: seconds === null ? ('crash' as const) : ('ok' as const),
});

const scan: TimeSummary = {
  mode: 'scan',
  run_dir: '/runs/x',
  findings: ['x=1 is the fastest'],
  commands: [
    command('x=2', { x: 2 }, [run(0.3), run(0.2), run(0.4)]),
    command('x=1', { x: 1 }, [run(0.1), run(null, 1), run(0.12), run(0.11)]),
  ],
};
const ctx: ExportContext = {
  commandLine: 'tunebench time -L x 2,1 "sleep {x}"',
  command: (c) => `sleep ${c.config['x']}`,
};

/** The keys of one of hyperfine 1.15's results[] (a scan), in its order. */
const HYPERFINE_KEYS = [
  'command',
  'mean',
  'stddev',
  'median',
  'user',
  'system',
  'min',
  'max',
  'times',
  'exit_codes',
  'parameters',
];

describe('time exports: hyperfine JSON', () => {
  it("writes hyperfine's fields in its order, seconds, parameters as text, tunebench's under its own key", () => {
    const doc = JSON.parse(timeJson(scan, ctx));
    assert.deepEqual(Object.keys(doc), ['results', 'tunebench']);
    const [two, one] = doc.results;
    assert.deepEqual(
      Object.keys(two).filter((k) => k !== 'tunebench'),
      HYPERFINE_KEYS,
    );
    assert.equal(two.command, 'sleep 2');
    assert.deepEqual([two.mean, two.median, two.min, two.max], [0.3, 0.3, 0.2, 0.4]);
    assert.deepEqual([two.user, two.system, two.stddev], [0.002, 0.001, 0.01]);
    assert.deepEqual(two.times, [0.3, 0.2, 0.4]);
    assert.deepEqual(two.parameters, { x: '2' });
    // A run that never timed is not in times/exit_codes (kept pairwise), only in tunebench.runs_in_order.
    assert.deepEqual(one.times, [0.1, 0.12, 0.11]);
    assert.deepEqual(one.exit_codes, [0, 0, 0]);
    assert.equal(one.tunebench.runs_in_order.length, 4);
    assert.deepEqual(one.tunebench.failures, { crash: 1 });
    assert.equal(one.tunebench.verdict, 'best');
    assert.deepEqual(doc.tunebench, {
      version: 1,
      mode: 'scan',
      command_line: ctx.commandLine,
      run_dir: '/runs/x',
      findings: ['x=1 is the fastest'],
    });
  });

  it('has no parameters outside a scan, and nulls for a command that never timed', () => {
    const compare: TimeSummary = {
      ...scan,
      mode: 'compare',
      commands: [command('false', { command: 'false' }, [run(null, 1)])],
    };
    const [r] = JSON.parse(timeJson(compare, { ...ctx, command: (c) => c.label })).results;
    assert.equal('parameters' in r, false);
    assert.deepEqual(
      [r.command, r.mean, r.stddev, r.median, r.min, r.max, r.user],
      ['false', null, null, null, null, null, null],
    );
    assert.deepEqual([r.times, r.exit_codes], [[], []]);
  });
});

describe('time exports: CSV, AsciiDoc, Org', () => {
  it("CSV: hyperfine's header and a parameter_<name> column, fields quoted where they must be", () => {
    const text = timeCsv(scan, { ...ctx, command: (c) => (c.config['x'] === 2 ? 'say "a, b"' : 'plain') });
    assert.deepEqual(text.trim().split('\n'), [
      'command,mean,stddev,median,user,system,min,max,parameter_x',
      '"say ""a, b""",0.3,0.01,0.3,0.002,0.001,0.2,0.4,2',
      'plain,0.11,0.01,0.11,0.002,0.001,0.1,0.12,1',
    ]);
  });

  it('AsciiDoc and Org: the terminal table, one row per command, in the unit asked for', () => {
    const adoc = timeAsciidoc(scan, { ...ctx, unit: 'millisecond' });
    assert.match(adoc, /^\[cols="<,>,>,>,>,<"\]\n\|===\n\| values \n\| runs \n/);
    assert.match(
      adoc,
      /\n\n\| `x=2` \n\| 3 \n\| 300 ms \(no CI below 6 runs\) \n\| 200 ms … 400 ms \n\| 2\.00 ms \/ 1\.00 ms \n\| best \n/,
    );
    assert.match(adoc, /\|===\n\n\* x=1 is the fastest\n$/);
    const org = timeOrgmode(scan, { ...ctx, unit: 'second' });
    assert.deepEqual(org.split('\n').slice(0, 4), [
      '| values | runs | median time [95% CI] | min … max | user / system (mean) | verdict |',
      '|--+--+--+--+--+--|',
      '| =x=2= | 3 | 0.300 s (no CI below 6 runs) | 0.200 s … 0.400 s | 0.00200 s / 0.00100 s | best |',
      '| =x=1= | 3 (+1 crash) | 0.110 s (no CI below 6 runs) | 0.100 s … 0.120 s | 0.00200 s / 0.00100 s | best |',
    ]);
  });
});

describe('time table: --time-unit and --sort', () => {
  it('-u fixes the unit; without it each value gets its own', () => {
    assert.deepEqual(
      [
        fmtDuration(0.0123),
        fmtDuration(0.0123, 'millisecond'),
        fmtDuration(0.0123, 'second'),
        fmtDuration(123.4, 'millisecond'),
      ],
      ['12.3 ms', '12.3 ms', '0.0123 s', '123400 ms'],
    );
  });

  it('mean-time sorts by mean (failed last); auto and command keep the order given', () => {
    const failed = command('none', { x: 3 }, [run(null, 1)]);
    const s = { ...scan, commands: [failed, ...scan.commands] };
    assert.deepEqual(
      sortedSummary(s, 'mean-time').commands.map((c) => c.label),
      ['x=1', 'x=2', 'none'],
    );
    for (const order of ['auto', 'command'] as const)
      assert.deepEqual(
        sortedSummary(s, order).commands.map((c) => c.label),
        ['none', 'x=2', 'x=1'],
      );
    assert.match(timeText(scan, { unit: 'millisecond' }), /^x=2\s+3\s+300 ms/m);
  });
});
