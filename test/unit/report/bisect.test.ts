// bisect.json's sentences, bisect.md, the chart's rows and report.html, from the results of the shipped
// search (runBisect) over a deterministic measure function: a culprit with its parent's trials, a range
// left by a skipped commit, no culprit, and a bad commit that cannot be built.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runBisect, type MeasureFn, type StepVerdict } from '../../../harness/search/bisect.js';
import {
  answerLines,
  bisectHtml,
  bisectMarkdown,
  ratioRows,
  stepLine,
  type BisectFile,
} from '../../../harness/report/bisect.js';
import type { CommitInfo } from '../../../harness/executors/git.js';

const COMMITS = Array.from({ length: 8 }, (_, i) =>
  `${String(i + 1).repeat(12)}abcdef0123456789abcdef0123`.slice(0, 40),
);
const GOOD = '0'.repeat(40);
const info = (sha: string, subject: string): CommitInfo => ({
  sha,
  subject,
  author: 'Dev Eloper',
  email: 'dev@example.com',
  date: '2026-11-27T00:00:00Z',
});
const ratio = (estimate: number) => ({ estimate, low: estimate - 0.03, high: estimate + 0.03, level: 0.95 });

/** Commits from `culprit` (0-based) on are slower (0.85); `verdicts` overrides a commit's verdict. */
function measure(culprit: number | null, verdicts: Record<number, StepVerdict> = {}): MeasureFn {
  return async (commit) => {
    const i = COMMITS.indexOf(commit);
    const verdict = verdicts[i] ?? (culprit !== null && i >= culprit ? 'slower' : 'same');
    return {
      verdict,
      ratio: verdict === 'skipped' ? null : ratio(verdict === 'slower' ? 0.85 : 1.01),
      pairs: [],
      trials: 10,
      rounds: 5,
      ...(verdict === 'skipped'
        ? { failure: { phase: 'build' as const, side: 'commit' as const, detail: 'make: *** [all] Error 2\nmore' } }
        : {}),
    };
  };
}

/** bisect.json as the engine writes it: each step's trials are the next 10 journal indices. */
async function fileOf(culprit: number | null, verdicts: Record<number, StepVerdict> = {}): Promise<BisectFile> {
  const result = await runBisect(COMMITS, measure(culprit, verdicts));
  const o = result.outcome;
  return {
    tunebench_bisect: 1,
    repo: '/repo',
    good: info(GOOD, 'the good one'),
    bad: info(COMMITS.at(-1)!, 'the bad one'),
    commits: COMMITS,
    result,
    step_trials: result.steps.map((s, i) =>
      s.verdict === 'skipped' ? [] : Array.from({ length: 10 }, (_, k) => i * 10 + k),
    ),
    builds: Object.entries(verdicts)
      .filter(([, v]) => v === 'skipped')
      .map(([i]) => ({ commit: COMMITS[Number(i)]!, ok: false, detail: 'make: *** [all] Error 2', seconds: 1 })),
    culprit: o.kind === 'culprit' ? info(o.commit, `commit ${o.index + 1}`) : null,
    range: o.kind === 'range' ? o.commits.map((c) => info(c, `commit ${COMMITS.indexOf(c) + 1}`)) : null,
    run_dir: '/runs/r1',
  };
}

describe('the bisection report', () => {
  it('names the culprit with its ratio, its trials and its parent measured the same', async () => {
    const file = await fileOf(5);
    const [line] = answerLines(file);
    // Steps: the check (8 of 8), then 4, 6 (slower), 5 (same) and 6 is the culprit.
    const steps = file.result.steps;
    const lastAt = (c: string) => steps.map((s) => s.commit).lastIndexOf(c);
    const culpritStep = lastAt(COMMITS[5]!);
    const parentStep = lastAt(COMMITS[4]!);
    const t = (i: number) => `trials ${i * 10}-${i * 10 + 9}`;
    assert.equal(
      line,
      `first bad commit: ${COMMITS[5]!.slice(0, 12)} commit 6 (Dev Eloper): 0.85x [0.82, 0.88] against the good commit, ` +
        `${t(culpritStep)} of /runs/r1/trials.jsonl; its parent ${COMMITS[4]!.slice(0, 12)} measured the same (${t(parentStep)})`,
    );
    assert.equal(
      stepLine(1, steps[0]!, COMMITS.length),
      `step 1: ${COMMITS[7]!.slice(0, 12)} (the bad commit, 8 of 8) slower 0.85x [0.82, 0.88] after 5 rounds`,
    );
    // The chart's rows: one per tested commit, in history order, whatever order the steps took.
    const rows = ratioRows(file);
    assert.deepEqual(
      rows.map((r) => r.position),
      [...new Set(steps.map((s) => s.index + 1))].sort((a, b) => a - b),
    );
    assert.deepEqual(
      rows.map((r) => r.verdict),
      rows.map((r) => (r.position >= 6 ? 'slower' : 'same')),
    );
    const md = bisectMarkdown(file);
    assert.match(
      md,
      new RegExp(
        `^\\| 1 \\| ${COMMITS[7]!.slice(0, 12)} \\| 8 of 8 \\| check \\| slower \\| 0\\.85x \\[0\\.82, 0\\.88\\] \\| 5 \\| trials 0-9 \\|$`,
        'm',
      ),
    );
    assert.equal(md.split('\n').filter((l) => /^\| \d+ \|/.test(l)).length, steps.length);
    assert.doesNotMatch(md, /Builds that failed/);
    const html = bisectHtml(file, null);
    assert.match(html, /<section id="bisect">/);
    assert.match(html, /charts\/bisect-ratio\.vl\.json/);
    assert.equal((html.match(/<tr><td>\d+<\/td>/g) ?? []).length, steps.length);
  });

  it('gives the range a skipped commit leaves, with why, and lists the failed build', async () => {
    // Culprit at commit 6 (0-based 5); its parent (commit 5) cannot be built: the answer is commits 5 and 6.
    const file = await fileOf(5, { 4: 'skipped' });
    assert.equal(file.result.outcome.kind, 'range');
    const lines = answerLines(file);
    assert.equal(
      lines[0],
      `the first bad commit is one of 2 commits (${COMMITS[4]!.slice(0, 12)} was skipped); the last of them is slower 0.85x [0.82, 0.88]:`,
    );
    assert.deepEqual(lines.slice(1), [
      `  ${COMMITS[4]!.slice(0, 12)} commit 5 (Dev Eloper)`,
      `  ${COMMITS[5]!.slice(0, 12)} commit 6 (Dev Eloper)`,
    ]);
    const skipped = file.result.steps.findIndex((s) => s.verdict === 'skipped');
    assert.equal(
      stepLine(skipped + 1, file.result.steps[skipped]!, 8),
      `step ${skipped + 1}: ${COMMITS[4]!.slice(0, 12)} (commit 5 of 8) skipped: this commit failed to build (make: *** [all] Error 2)`,
    );
    const md = bisectMarkdown(file);
    assert.match(md, new RegExp(`^- ${COMMITS[4]!.slice(0, 12)}: make: \\*\\*\\* \\[all\\] Error 2$`, 'm'));
    assert.match(md, new RegExp(`\\| skipped \\| - \\| 5 \\| no trials \\|$`, 'm'));
  });

  it('says "no culprit" after the check alone, and "no answer" when the bad commit cannot be built', async () => {
    const none = await fileOf(null);
    assert.deepEqual(answerLines(none), [
      'no culprit: the bad commit is not slower than the good one (1.01x [0.98, 1.04])',
    ]);
    assert.equal(none.result.steps.length, 1);
    const broken = await fileOf(5, { 7: 'skipped' });
    assert.deepEqual(answerLines(broken), [
      `no answer: commit ${COMMITS[7]!.slice(0, 12)} could not be measured (build failed: make: *** [all] Error 2)`,
    ]);
  });
});
