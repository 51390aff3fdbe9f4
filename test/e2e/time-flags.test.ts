// hyperfine's flags on `tunebench time`, one real run per flag group (small commands, few runs): what
// each flag does is read back from the files the commands write, the journal and the exports.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { readJournal } from '../../harness/store/journal.js';
import { CLI, tempDir } from '../support/paths.js';

async function tunebench(args: string[], cwd = tempDir()) {
  const r = await execa(process.execPath, [CLI, ...args, '--out', join(cwd, 'reports')], { cwd, reject: false });
  return { ...r, cwd };
}

const journal = (runDir: string) => readJournal(join(runDir, 'trials.jsonl')).records;
const roles = (runDir: string) => journal(runDir).map((t) => (t.role.kind === 'warm-up' ? 'warm-up' : 'timed'));
const lines = (path: string) => readFileSync(path, 'utf8').trim().split('\n');

describe('tunebench time: runs, warm-ups, -m and -M', () => {
  it('-w 2 -r 3: two warm-ups, then exactly three timed runs', async () => {
    const r = await tunebench(['time', '-w', '2', '-r', '3', 'true', '--json', '--quiet']);
    assert.equal(r.exitCode, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.deepEqual(roles(summary.run_dir), ['warm-up', 'warm-up', 'timed', 'timed', 'timed']);
    assert.equal(summary.commands[0].runs, 3);
  });

  it('-M bounds one command (hyperfine: 10 runs within -m and -M) and a compare; -r with -m is refused', async () => {
    const one = await tunebench(['time', '-M', '4', 'true', '--json', '--quiet']);
    assert.equal(one.exitCode, 0, one.stderr);
    assert.equal(JSON.parse(one.stdout).commands[0].runs, 4);
    const two = await tunebench(['time', '-m', '3', '-M', '4', 'true', 'true', '--json', '--quiet']);
    assert.equal(two.exitCode, 0, two.stderr);
    const stage = JSON.parse(two.stdout).result.stages[0];
    assert.ok(stage.kind === 'compare');
    for (const c of JSON.parse(two.stdout).commands) assert.ok(c.runs >= 3 && c.runs <= 4, `${c.label}: ${c.runs}`);
    const both = await tunebench(['time', '-r', '3', '-m', '4', 'true']);
    assert.equal(both.exitCode, 2);
    assert.match(both.stderr, /--runs fixes the number of runs: drop -m\/--min-runs/);
  });
});

describe('tunebench time: --setup, --prepare, --conclude, --cleanup', () => {
  it('setup once per command before the first run, prepare and conclude around every run, cleanup after the last', async () => {
    const cwd = tempDir();
    const r = await tunebench(
      [
        'time',
        ...['-S', 'sh', '-w', '1', '-r', '3'],
        ...['-s', 'echo setup >> log', '-p', 'echo prepare >> log'],
        ...['-C', 'echo conclude >> log', '-c', 'echo cleanup >> log'],
        'echo run-a >> log',
        'echo run-b >> log',
        '--quiet',
      ],
      cwd,
    );
    assert.equal(r.exitCode, 0, r.stderr);
    const log = lines(join(cwd, 'log'));
    assert.deepEqual(log.slice(0, 2), ['setup', 'setup']);
    assert.deepEqual(log.slice(-2), ['cleanup', 'cleanup']);
    const runs = log.slice(2, -2);
    // 2 commands x (1 warm-up + 3 timed): each run between its prepare and its conclude.
    assert.equal(runs.length, 8 * 3);
    for (let i = 0; i < runs.length; i += 3) {
      assert.equal(runs[i], 'prepare');
      assert.match(runs[i + 1]!, /^run-[ab]$/);
      assert.equal(runs[i + 2], 'conclude');
    }
  });

  it('a failed --setup stops before any run; a failed --cleanup keeps the results and exits 2', async () => {
    const setup = await tunebench(['time', '-r', '3', '-s', 'false', 'true']);
    assert.equal(setup.exitCode, 2);
    assert.match(setup.stderr, /--setup "false" failed \(exit code 1\).*fix it, or drop --setup/);
    assert.doesNotMatch(setup.stdout, /run directory/);
    const cleanup = await tunebench(['time', '-r', '3', '-c', 'false', 'true']);
    assert.equal(cleanup.exitCode, 2);
    assert.match(cleanup.stderr, /--cleanup "false" failed/);
    assert.match(cleanup.stdout, /^true\s+3\s/m);
  });
});

describe('tunebench time: names, --reference, --sort, --time-unit, --style', () => {
  it('the reference is the baseline, -n names the command, mean-time sorts, -u second writes seconds', async () => {
    const r = await tunebench([
      'time',
      // Six rounds: the fewest with a CI of the median, and enough for a sequential CI to call a 5x or more faster.
      ...['-r', '6', '--reference', 'sleep 0.05', '-n', 'quick', 'true'],
      ...['--sort', 'mean-time', '-u', 'second', '--style', 'basic'],
    ]);
    assert.equal(r.exitCode, 0, r.stderr);
    const rows = r.stdout.split('\n').filter((l) => /^(quick|sleep 0\.05)\s/.test(l));
    assert.equal(rows.length, 2, r.stdout);
    assert.match(rows[0]!, /^quick\s+6\s+0\.\d+ s .*faster: /);
    assert.match(rows[1]!, /^sleep 0\.05\s+6\s+0\.0\d+ s .*baseline$/);
    assert.doesNotMatch(r.stdout, / ms\b/);
    // basic: plain progress lines on stderr, no live status line.
    assert.match(r.stderr, /\[time\] trial 1\//);
    assert.doesNotMatch(r.stderr, /\r|\u001b\[/);
  });

  it('--style none prints nothing and still writes the exports; too many names are refused', async () => {
    const cwd = tempDir();
    const r = await tunebench(['time', '-r', '3', '--style', 'none', '--export-csv', 'x.csv', 'true'], cwd);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, '');
    assert.equal(lines(join(cwd, 'x.csv')).length, 2);
    const names = await tunebench(['time', '-n', 'a', '-n', 'b', 'true']);
    assert.equal(names.exitCode, 2);
    assert.match(names.stderr, /-n\/--command-name is given 2 times for 1 command\(s\)/);
  });
});

describe('tunebench time: --shell, -N, --input, --output, --show-output', () => {
  it('-S sh runs through the shell; --input feeds stdin; --output FILE gets stdout; -N is accepted', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'in.txt'), 'from the input file\n');
    const r = await tunebench(
      ['time', '-r', '3', '-S', 'sh', '--input', 'in.txt', '--output', 'out.txt', 'cat | tr a-z A-Z', '--quiet'],
      cwd,
    );
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(readFileSync(join(cwd, 'out.txt'), 'utf8'), 'FROM THE INPUT FILE\n');
    const none = await tunebench(['time', '-N', '-r', '3', 'true', '--quiet']);
    assert.equal(none.exitCode, 0, none.stderr);
  });

  it('--show-output lets the output through; the old boolean --shell is refused with the fix', async () => {
    const r = await tunebench(['time', '-r', '2', '--show-output', '-S', 'sh', 'echo shown; echo also >&2', '--quiet']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout.match(/^shown$/gm)?.length, 2);
    assert.equal(r.stderr.match(/^also$/gm)?.length, 2);
    const hidden = await tunebench(['time', '-r', '2', 'echo hidden', '--quiet']);
    // The table names the command; its output ("hidden" on a line of its own) is discarded.
    assert.doesNotMatch(hidden.stdout, /^hidden$/m);
    assert.match(hidden.stdout, /^echo hidden\s+2\s/m);
    const old = await tunebench(['time', '--shell', 'true | true']);
    assert.equal(old.exitCode, 2);
    assert.match(old.stderr, /--shell takes the shell that runs the commands .*write --shell sh 'true \| true'/);
    const flag = await tunebench(['claim', '2x', '--shell', '--baseline', 'sleep 0.1', '--candidate', 'true']);
    assert.equal(flag.exitCode, 2);
    assert.match(flag.stderr, /--shell takes the shell .*write --shell sh 'cmd'/);
  });

  it('claim takes --shell sh as time does', async () => {
    const r = await tunebench([
      'claim',
      '>=2x faster',
      ...['--shell', 'sh', '--baseline', 'sleep 0.2', '--candidate', 'sleep 0.02 && true'],
      ...['--max-pairs', '6'],
    ]);
    assert.equal(r.exitCode, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /: confirmed \(/);
  });
});

describe('tunebench time: --ignore-failure', () => {
  it('-i times a command that exits non-zero and keeps its exit codes; without it, exit 2 names -i', async () => {
    const cwd = tempDir();
    const r = await tunebench(
      ['time', '-r', '3', '-i', '-S', 'sh', 'exit 3', '--export-json', 'f.json', '--quiet'],
      cwd,
    );
    assert.equal(r.exitCode, 0, r.stderr);
    const [result] = JSON.parse(readFileSync(join(cwd, 'f.json'), 'utf8')).results;
    assert.deepEqual(result.exit_codes, [3, 3, 3]);
    assert.equal(result.times.length, 3);
    assert.ok(result.times.every((t: unknown) => typeof t === 'number' && t > 0));
    const without = await tunebench(['time', '-r', '3', '-S', 'sh', 'exit 3', '--quiet']);
    assert.equal(without.exitCode, 2);
    assert.match(without.stderr, /failed at every run \(\d+ crash\).*-i\/--ignore-failure/);
  });
});

describe('tunebench time: -P and -L scans', () => {
  it('-L and -P give every combination in the order given; -D steps by decimals', async () => {
    const cwd = tempDir();
    const r = await tunebench(
      ['time', '-r', '3', '-L', 'w', 'b,a', '-P', 'n', '1', '2', 'echo {w} {n}', '--export-json', 's.json', '--quiet'],
      cwd,
    );
    assert.equal(r.exitCode, 0, r.stderr);
    const results = JSON.parse(readFileSync(join(cwd, 's.json'), 'utf8')).results;
    assert.deepEqual(
      results.map((x: { command: string; parameters: unknown }) => [x.command, x.parameters]),
      [
        ['echo b 1', { w: 'b', n: '1' }],
        ['echo b 2', { w: 'b', n: '2' }],
        ['echo a 1', { w: 'a', n: '1' }],
        ['echo a 2', { w: 'a', n: '2' }],
      ],
    );
    const step = await tunebench([
      'time',
      '-P',
      'd',
      '0.01',
      '0.05',
      '-D',
      '0.02',
      'sleep {d}',
      '-r',
      '3',
      '--json',
      '--quiet',
    ]);
    assert.equal(step.exitCode, 0, step.stderr);
    assert.deepEqual(
      JSON.parse(step.stdout).commands.map((c: { label: string }) => c.label),
      ['d=0.01', 'd=0.03', 'd=0.05'],
    );
    const decimals = await tunebench(['time', '-P', 'd', '0.1', '0.3', 'sleep {d}']);
    assert.equal(decimals.exitCode, 2);
    assert.match(decimals.stderr, /-P d 0\.1 0\.3: give -D with a step for decimal bounds/);
  });
});

/** The layout of hyperfine 1.15's --export-json for a scan (`hyperfine -N --runs 3 --export-json a.json -L x 1,2 'true {x}'`). */
const HYPERFINE_RESULT = {
  command: 'true 1',
  mean: 0.0020133383333333335,
  stddev: 0.001962017320877248,
  median: 0.000923382,
  user: 0.0007893333333333333,
  system: 0.0,
  min: 0.000838285,
  max: 0.004278348,
  times: [0.000923382, 0.000838285, 0.004278348],
  exit_codes: [0, 0, 0],
  parameters: { x: '1' },
};

describe('tunebench time: exports', () => {
  it("--export-json is hyperfine's layout; CSV, Markdown, AsciiDoc and Org tables are written", async () => {
    const cwd = tempDir();
    const files = { json: 'a.json', csv: 'a.csv', markdown: 'a.md', asciidoc: 'a.adoc', orgmode: 'a.org' };
    const r = await tunebench(
      [
        'time',
        ...['-r', '3', '-L', 'x', '1,2', 'echo {x}', '--quiet'],
        ...Object.entries(files).flatMap(([k, f]) => [`--export-${k}`, f]),
      ],
      cwd,
    );
    assert.equal(r.exitCode, 0, r.stderr);
    const doc = JSON.parse(readFileSync(join(cwd, files.json), 'utf8'));
    assert.equal(doc.results.length, 2);
    for (const result of doc.results) {
      // Every field of hyperfine's, in its order and of its type; tunebench's own only under "tunebench".
      const own = Object.keys(result).filter((k) => k !== 'tunebench');
      assert.deepEqual(own, Object.keys(HYPERFINE_RESULT));
      for (const [k, v] of Object.entries(HYPERFINE_RESULT)) {
        if (typeof v === 'number') assert.equal(typeof result[k], 'number', k);
        else if (Array.isArray(v)) assert.ok(Array.isArray(result[k]) && result[k].length === 3, k);
      }
      assert.equal(typeof result.parameters.x, 'string');
      assert.ok(result.min <= result.median && result.median <= result.max);
      assert.ok(result.times.every((t: number) => t >= result.min && t <= result.max));
      assert.ok(['best', 'tied with the best', 'slower'].includes(result.tunebench.verdict));
    }
    assert.deepEqual(
      doc.results.map((x: { command: string }) => x.command),
      ['echo 1', 'echo 2'],
    );
    assert.equal(doc.tunebench.mode, 'scan');
    const csv = lines(join(cwd, files.csv));
    assert.equal(csv[0], 'command,mean,stddev,median,user,system,min,max,parameter_x');
    assert.match(csv[1]!, /^echo 1,([\d.e-]*,){7}1$/);
    assert.match(readFileSync(join(cwd, files.markdown), 'utf8'), /^\| `x=1` \| 3 \|/m);
    assert.match(
      readFileSync(join(cwd, files.asciidoc), 'utf8'),
      /^\[cols="<,>,>,>,>,<"\]\n\|===\n\| values \n\| runs \n\| median time \[95% CI\] \n\| min … max \n\| user \/ system \(mean\) \n/,
    );
    assert.match(
      readFileSync(join(cwd, files.orgmode), 'utf8'),
      /^\| values \| runs \|.*\n\|--(\+--)+\|\n\| =x=1= \| 3 \|/,
    );
  });
});
