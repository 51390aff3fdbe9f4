// `tunebench bisect` on real git repositories of 16 commits whose program does fixed CPU work: a
// planted 15% slowdown is named, a history without one ends with "no culprit", a commit that does
// not build is skipped, and a bisection killed mid-way resumes without running a finished trial again.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { readJournal } from '../../harness/store/journal.js';
import type { BisectFile } from '../../harness/report/bisect.js';
import { makeBisectRepo } from '../support/bisect-repo.js';
import { CLI, tempDir } from '../support/paths.js';
import { waitForTrials } from '../support/wait.js';

function repo(o: Parameters<typeof makeBisectRepo>[1]): { dir: string; shas: string[] } {
  const dir = tempDir('tunebench-bisect-');
  return { dir, shas: makeBisectRepo(dir, o) };
}

function bisectArgs(r: { dir: string; shas: string[] }, extra: string[] = []): string[] {
  return [CLI, 'bisect', '--repo', r.dir, '--good', r.shas[0]!, '--bad', r.shas.at(-1)!, '--no-draw', ...extra];
}

const runDirOf = (stdout: string) => /run directory: (.+)/.exec(stdout)?.[1]?.trim() ?? '';
const bisectJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'bisect.json'), 'utf8')) as BisectFile;

describe('tunebench bisect', () => {
  it('names the commit that made the program 15% slower in at most 6 steps, from worktrees it removes', async () => {
    const r = repo({ commits: 16, slowAt: 11 });
    const out = join(tempDir(), 'reports');
    const p = await execa(process.execPath, [...bisectArgs(r), '--out', out, '--', 'sh work.sh'], { reject: false });
    assert.equal(p.exitCode, 0, p.stderr);
    const dir = runDirOf(p.stdout);
    const file = bisectJson(dir);
    const o = file.result.outcome;
    // This machine's noise, from the check's paired rounds: the spread of the per-round ratios. This VM's
    // runs of a fixed CPU loop vary by about 15% (CPU time as much as wall time: the host is shared); the
    // issue's bound of 6 steps is for a machine where that spread is at most 7% (bench:bisect simulates
    // the rates through the same code). Noisy or not, the answer is never wrong.
    const pairs = file.result.steps[0]!.pairs ?? [];
    const mean = pairs.reduce((a, b) => a + b, 0) / pairs.length;
    const cv = Math.sqrt(pairs.reduce((a, b) => a + (b - mean) ** 2, 0) / (pairs.length - 1)) / mean;
    const quiet = cv <= 0.07;
    if (o.kind === 'culprit') {
      assert.match(
        p.stdout,
        new RegExp(
          `^first bad commit: ${r.shas[11]!.slice(0, 12)} commit 11: the slow change \\(Dev Eloper\\): 0\\.\\d\\dx \\[`,
          'm',
        ),
      );
    } else {
      // Noisy: steps that stay undecided leave a range that holds commit 11, or (when even the check
      // stays undecided) "no culprit" said as undecided; never another commit.
      assert.ok(!quiet, `pair ratios vary by ${(cv * 100).toFixed(1)}%, yet no culprit was named:\n${p.stderr}`);
      if (o.kind === 'range') assert.ok(o.commits.includes(r.shas[11]!), p.stdout);
      else
        assert.deepEqual([o.kind, o.kind === 'no-culprit' ? o.verdict : null], ['no-culprit', 'undecided'], p.stdout);
    }
    // log2 16 = 4 steps, the good/bad check and at most one repeat of an undecided step.
    if (quiet) assert.ok(file.result.steps.length <= 6, `${file.result.steps.length} steps:\n${p.stderr}`);
    assert.match(p.stderr, /^step 1: \S+ \(the bad commit, 16 of 16\) (slower|undecided) /m);
    // Every trial is journaled with its commit; the answer's trials are in the journal.
    const records = readJournal(join(dir, 'trials.jsonl')).records;
    assert.equal(records.length, new Set(file.step_trials.flat()).size);
    assert.ok(records.every((t) => r.shas.includes(String(t.config['commit']))));
    assert.match(readFileSync(join(dir, 'bisect.md'), 'utf8'), /^\| 1 \| \S+ \| 16 of 16 \| check \|/m);
    assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /<section id="bisect">/);
    assert.ok(existsSync(join(dir, 'charts', 'bisect-ratio.vl.json')));
    // The worktrees are gone, and the user's checkout is untouched.
    assert.ok(!existsSync(join(dir, 'worktrees')));
    const trees = await execa('git', ['-C', r.dir, 'worktree', 'list']);
    assert.equal(trees.stdout.split('\n').length, 1, trees.stdout);
    assert.equal((await execa('git', ['-C', r.dir, 'status', '--porcelain'])).stdout, '');
  });

  it('ends with "no culprit" when the bad commit is not slower, after the check alone', async () => {
    const r = repo({ commits: 16 });
    const out = join(tempDir(), 'reports');
    const p = await execa(process.execPath, [...bisectArgs(r), '--out', out, '--quiet', '--', 'sh work.sh'], {
      reject: false,
    });
    assert.equal(p.exitCode, 0, p.stderr);
    assert.match(p.stdout, /^no culprit: the bad commit is not slower than the good one \(\d\.\d\dx \[/m);
    // The check alone (and its one repeat when its first attempt was undecided): no bisection of noise.
    const steps = bisectJson(runDirOf(p.stdout)).result.steps;
    assert.ok(steps.length <= 2 && steps.every((s) => s.purpose === 'check'), JSON.stringify(steps));
    // --no-draw left the chart as a spec; tunebench report draws it from bisect.json (not from stages).
    const dir = runDirOf(p.stdout);
    assert.ok(!existsSync(join(dir, 'charts', 'bisect-ratio.svg')));
    const rep = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
    assert.equal(rep.exitCode, 0, rep.stderr);
    assert.equal(rep.stderr, '');
    assert.ok(existsSync(join(dir, 'charts', 'bisect-ratio.svg')));
    assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /<section id="bisect">[\s\S]*<svg/);
    assert.ok(!existsSync(join(dir, 'summary.md')), 'no stage report is written over a bisection');
    // A damaged bisect.json is refused with the field named.
    writeFileSync(join(dir, 'bisect.json'), JSON.stringify({ ...bisectJson(dir), commits: ['not a sha'] }));
    const bad = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
    assert.notEqual(bad.exitCode, 0);
    assert.match(
      bad.stderr,
      /bisect\.json of a bisection's run directory does not have the shape tunebench writes at field "commits\[0\]"/,
    );
  });

  it('skips a commit whose build fails, and says so', async () => {
    // The issue's repository: commit 7 of the 16 after good (0-based; "commit 8" in the subjects), the first
    // step's midpoint, does not build. A twofold slowdown: this test is about the skip, so its steps must
    // decide on a noisy machine too (the first test is about power).
    const r = repo({ commits: 16, slowAt: 11, slowdown: 1, brokenAt: 8 });
    const out = join(tempDir(), 'reports');
    const args = [...bisectArgs(r), '--out', out, '--build', 'sh build.sh', '--', 'sh work.sh'];
    const p = await execa(process.execPath, args, { reject: false });
    assert.equal(p.exitCode, 0, p.stderr);
    assert.match(
      p.stderr,
      /^step \d: \S+ \(commit 8 of 16\) skipped: this commit failed to build \(the build command exited with 1: syntax error in module\)/m,
    );
    const file = bisectJson(runDirOf(p.stdout));
    const skipped = file.result.steps.find((s) => s.verdict === 'skipped')!;
    assert.equal(skipped.commit, r.shas[8]);
    assert.deepEqual(skipped.failure?.phase, 'build');
    assert.deepEqual(file.step_trials[file.result.steps.indexOf(skipped)], []);
    assert.ok(file.builds.some((b) => b.commit === r.shas[8] && !b.ok));
    const o = file.result.outcome;
    assert.equal(o.kind === 'culprit' ? o.commit : null, r.shas[11], p.stdout);
  });

  it('resumes a bisection killed mid-way (SIGKILL) without running a finished trial again', async () => {
    const r = repo({ commits: 8, slowAt: 6, slowdown: 1 });
    const out = join(tempDir(), 'reports');
    const child = execa(process.execPath, [...bisectArgs(r), '--out', out, '--', 'sh work.sh'], { reject: false });
    const dir = await waitForTrials(join(out, 'bisect'), 'command', 50);
    child.kill('SIGKILL');
    await child;
    const journalPath = join(dir, 'trials.jsonl');
    const before = readJournal(journalPath).records;
    const p = await execa(process.execPath, [CLI, 'bisect', '--resume', dir, '--no-draw'], { reject: false });
    assert.equal(p.exitCode, 0, p.stderr);
    assert.match(p.stdout, /first bad commit: |the first bad commit is one of/);
    const after = readJournal(journalPath).records;
    assert.deepEqual(after.slice(0, before.length), before);
    assert.equal(new Set(after.map((t) => t.index)).size, after.length);
    const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { status: string; resumes: unknown[] };
    assert.equal(run.status, 'finished');
    assert.equal(run.resumes.length, 1);
    assert.ok(!existsSync(join(dir, 'worktrees')));
  });
});
