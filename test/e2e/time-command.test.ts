// `tunebench time` and `tunebench claim` on real commands: verdicts, scans, exports, run directories
// that `tunebench report` renders again, --prepare, --warmup, --shell and the claim's exit status
// (every hyperfine flag: time-flags.test.ts).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { readJournal } from '../../harness/store/journal.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';

// Simulated step times (2 ms x work): a 2.5x that a loaded machine cannot blur.
const SIMULATED = join(PROGRAMS, 'simulated-steps.mjs');

async function tunebench(args: string[], cwd = tempDir()) {
  const out = join(cwd, 'reports');
  const r = await execa(process.execPath, [CLI, ...args, '--out', out], { cwd, reject: false });
  return { ...r, cwd, out };
}

/** The run directory a command printed. */
const runDirOf = (stdout: string) => /run directory: (.+)/.exec(stdout)?.[1]?.trim() ?? '';

describe('tunebench time', () => {
  it('times two commands interleaved, gives medians with CIs and the verdict against the first', async () => {
    const json = join(tempDir(), 'times.json');
    const md = join(tempDir(), 'times.md');
    const r = await tunebench(['time', 'sleep 0.05', 'sleep 0.2', '--export-json', json, '--export-markdown', md]);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^command\s+runs\s+median time \[95% CI\]/m);
    assert.match(r.stdout, /^sleep 0\.2\s+\d+\s+2\d\d ms \[2\d\d ms, 2\d\d ms\].*slower: 0\.\d\dx \[/m);
    // --export-json is hyperfine's layout, with tunebench's figures under "tunebench".
    const doc = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(doc.tunebench.mode, 'compare');
    const [first, second] = doc.results;
    assert.equal(first.tunebench.verdict, 'baseline');
    assert.equal(second.tunebench.verdict, 'slower');
    assert.ok(second.tunebench.speedup.high < 0.5, `speed-up ${JSON.stringify(second.tunebench.speedup)}`);
    assert.equal(first.tunebench.timing, 'process');
    const ci = first.tunebench.median_ci;
    assert.ok(ci.low <= first.median && first.median <= ci.high);
    // Paired rounds in alternating order: the journal runs the two commands in turn.
    const dir = runDirOf(r.stdout);
    const records = readJournal(join(dir, 'trials.jsonl')).records;
    assert.deepEqual(
      records.slice(0, 4).map((t) => t.argv?.join(' ')),
      ['sleep 0.05', 'sleep 0.2', 'sleep 0.2', 'sleep 0.05'],
    );
    assert.match(readFileSync(md, 'utf8'), /\| `sleep 0\.2` \| \d+ \| .* \| slower: 0\.\d\dx/);
    // Processes shorter than three telemetry samples were never seen at their peak: no memory verdict.
    const arms = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).result.stages[0].result.arms;
    assert.deepEqual(
      arms.map((a: { memory_verdict: string; memory_ratio: unknown }) => [a.memory_verdict, a.memory_ratio]),
      [
        ['baseline', null],
        ['not measured', null],
      ],
    );
    for (const f of ['run.json', 'report.html', 'summary.md', 'time.json', 'time.md'])
      assert.ok(existsSync(join(dir, f)), f);
    // The one-liner draws no chart (vega's cost per invocation); its spec is written, and the page says how to draw it.
    assert.ok(existsSync(join(dir, 'charts', 'compare-time.vl.json')));
    assert.ok(!existsSync(join(dir, 'charts', 'compare-time.svg')));
    assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /not drawn by this command[^]*tunebench report/);
    // A normal run directory: the report renders again, charts drawn.
    const again = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
    assert.equal(again.exitCode, 0, again.stderr);
    assert.ok(existsSync(join(dir, 'charts', 'compare-time.svg')));
    assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /data-chart="compare-time"/);
  });

  it('-L scans a parameter, says which values are tied with the best, and runs warm-ups first', async () => {
    const r = await tunebench(['time', '--warmup', '1', '-L', 'd', '0.3,0.05', 'sleep {d}', '--json', '--quiet']);
    assert.equal(r.exitCode, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.mode, 'scan');
    const verdicts = Object.fromEntries(
      summary.commands.map((c: { label: string; verdict: string }) => [c.label, c.verdict]),
    );
    assert.deepEqual(verdicts, { 'd=0.05': 'best', 'd=0.3': 'slower' });
    assert.match(summary.findings[0], /d=0\.05 is the fastest, significantly ahead/);
    const records = readJournal(join(summary.run_dir, 'trials.jsonl')).records;
    assert.deepEqual(
      records.slice(0, 2).map((t) => [t.role, t.config['d']]),
      [
        [{ kind: 'warm-up', round: 1 }, 0.3],
        [{ kind: 'warm-up', round: 1 }, 0.05],
      ],
    );
    assert.equal(records.filter((t) => t.role.kind === 'warm-up').length, 2);
  });

  it('times a program that sends step events by its steps (samples/s)', async () => {
    const r = await tunebench([
      'time',
      '--json',
      '--quiet',
      `node ${SIMULATED} --work=1`,
      `node ${SIMULATED} --work=0.4`,
    ]);
    assert.equal(r.exitCode, 0, r.stderr);
    const [first, second] = JSON.parse(r.stdout).commands;
    assert.equal(first.timing, 'steps');
    assert.ok(first.samples_per_second.median > 0);
    assert.equal(second.verdict, 'faster');
    assert.ok(second.speedup.estimate > 1.8 && second.speedup.estimate < 3.5, JSON.stringify(second.speedup));
  });

  it('runs --prepare before every run, and stops with its error when it fails', async () => {
    const ok = await tunebench(['time', '--runs', '4', '--prepare', 'touch ready', 'rm ready', '--json', '--quiet']);
    assert.equal(ok.exitCode, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).commands[0].runs, 4);
    const bad = await tunebench(['time', '--runs', '3', '--prepare', 'false', 'true', '--quiet']);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /the prepare command "false" failed before trial 0 .*fix it, or remove workload\.prepare/);
  });

  it('splits without a shell unless --shell names one, and says so', async () => {
    const refused = await tunebench(['time', 'true && true']);
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderr, /"&&" needs a shell .*add --shell sh/);
    const shell = await tunebench([
      'time',
      '--shell',
      'sh',
      '--runs',
      '3',
      'true && test -n "$HOME"',
      '--json',
      '--quiet',
    ]);
    assert.equal(shell.exitCode, 0, shell.stderr);
    assert.equal(JSON.parse(shell.stdout).commands[0].runs, 3);
  });

  it('reports a command that cannot start as invalid input (exit 2), with the run kept', async () => {
    const r = await tunebench(['time', '--runs', '3', 'no-such-program-tunebench']);
    assert.equal(r.exitCode, 2);
    assert.match(r.stderr, /no-such-program-tunebench/);
  });
});

describe('tunebench claim', () => {
  it('exits 0 for a confirmed claim and 1 for one the measurement refutes', async () => {
    const yes = await tunebench(['claim', '>=2x faster', '--baseline', 'sleep 0.3', '--candidate', 'sleep 0.1']);
    assert.equal(yes.exitCode, 0, yes.stderr + yes.stdout);
    assert.match(yes.stdout, /^Claim ">=2x faster" \(`sleep 0\.3` -> `sleep 0\.1`.*: confirmed \(/m);
    assert.ok(existsSync(join(runDirOf(yes.stdout), 'report.html')));
    const no = await tunebench([
      'claim',
      '8x',
      '--baseline',
      'sleep 0.2',
      '--candidate',
      'sleep 0.1',
      '--max-pairs',
      '6',
    ]);
    assert.equal(no.exitCode, 1, no.stderr);
    assert.match(no.stdout, /: falls short \(/);
  });

  it('refuses the same command on both sides, and a missing --candidate', async () => {
    const same = await tunebench(['claim', '2x', '--baseline', 'sleep 1', '--candidate', 'sleep  1']);
    assert.equal(same.exitCode, 2);
    assert.match(same.stderr, /the same command/);
    const missing = await tunebench(['claim', '2x', '--baseline', 'sleep 1']);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /--candidate/);
  });
});
