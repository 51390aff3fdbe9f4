// The bisection search over a deterministic measure function: the culprit at every position of 16
// commits within the step bound, no culprit, skipped and undecided commits, the repeat of
// an undecided step, the step budget, and bad input.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  nextIndex,
  runBisect,
  type MeasureContext,
  type MeasureFn,
  type StepVerdict,
} from '../../../harness/search/bisect.js';

const COMMITS = Array.from({ length: 16 }, (_, i) => `c${String(i).padStart(2, '0')}`);
const at = (commit: string) => COMMITS.indexOf(commit);
const ratio = (estimate: number) => ({ estimate, low: estimate - 0.02, high: estimate + 0.02, level: 0.95 });

/**
 * Commits from `culprit` on are slower (0.85); `verdicts` overrides a commit's answer, per attempt
 * when given as a pair. Records each call.
 */
function oracle(culprit: number | null, verdicts: Record<number, StepVerdict | [StepVerdict, StepVerdict]> = {}) {
  const calls: (MeasureContext & { commit: string })[] = [];
  const measure: MeasureFn = async (commit, context) => {
    calls.push({ commit, ...context });
    const i = at(commit);
    const given = verdicts[i];
    const truth: StepVerdict = culprit !== null && i >= culprit ? 'slower' : 'same';
    const verdict = given === undefined ? truth : Array.isArray(given) ? given[context.attempt - 1]! : given;
    return {
      verdict,
      ratio: verdict === 'skipped' ? null : ratio(verdict === 'slower' ? 0.85 : 1),
      pairs: [1, 1, 1],
      trials: 10,
      rounds: 5,
      ...(verdict === 'skipped'
        ? { failure: { phase: 'build', side: 'commit', detail: 'make: *** [all] Error 2' } }
        : {}),
    } as const;
  };
  return { measure, calls };
}

describe('runBisect', () => {
  it('names the culprit at each of 16 positions within log2(16) steps after the check', async () => {
    for (let culprit = 0; culprit < 16; culprit++) {
      const { measure, calls } = oracle(culprit);
      const r = await runBisect(COMMITS, measure);
      assert.deepEqual(r.outcome, { kind: 'culprit', commit: COMMITS[culprit], index: culprit, ratio: ratio(0.85) });
      assert.ok(r.steps.length <= 5, `culprit ${culprit}: ${r.steps.length} steps`);
      assert.equal(calls[0]!.commit, 'c15');
      assert.equal(calls[0]!.purpose, 'check');
      assert.ok(calls.slice(1).every((c) => c.purpose === 'step' && c.bad?.estimate === 0.85));
      assert.equal(r.check.commit, 'c15');
    }
  });

  it('takes the halving path of the issue: culprit 11 in 5 steps, 7 then 11, 9, 10', async () => {
    const { measure } = oracle(11);
    const r = await runBisect(COMMITS, measure);
    assert.deepEqual(
      r.steps.map((s) => [s.commit, s.verdict]),
      [
        ['c15', 'slower'],
        ['c07', 'same'],
        ['c11', 'slower'],
        ['c09', 'same'],
        ['c10', 'same'],
      ],
    );
    assert.equal(r.steps[2]!.trials, 10);
  });

  it('stops with no culprit when the bad commit is not slower, without bisecting', async () => {
    const { measure, calls } = oracle(null);
    const r = await runBisect(COMMITS, measure);
    assert.deepEqual(r.outcome, { kind: 'no-culprit', verdict: 'same', ratio: ratio(1) });
    assert.equal(calls.length, 1);
  });

  it('repeats an undecided check once with the larger budget, then gives up on it', async () => {
    const { measure, calls } = oracle(null, { 15: 'undecided' });
    const r = await runBisect(COMMITS, measure);
    assert.equal(r.outcome.kind, 'no-culprit');
    assert.equal(r.outcome.kind === 'no-culprit' && r.outcome.verdict, 'undecided');
    assert.deepEqual(
      calls.map((c) => c.attempt),
      [1, 2],
    );
  });

  it('reports a bad commit that cannot be built as unmeasurable', async () => {
    const { measure } = oracle(11, { 15: 'skipped' });
    const r = await runBisect(COMMITS, measure);
    assert.equal(r.outcome.kind, 'unmeasurable');
    assert.equal(r.outcome.kind === 'unmeasurable' && r.outcome.failure?.phase, 'build');
  });

  it('skips a commit that does not build and measures its neighbour instead', async () => {
    const { measure, calls } = oracle(11, { 7: 'skipped' });
    const r = await runBisect(COMMITS, measure);
    assert.equal(r.outcome.kind, 'culprit');
    assert.equal(r.outcome.kind === 'culprit' && r.outcome.commit, 'c11');
    assert.deepEqual(
      calls.slice(1, 3).map((c) => c.commit),
      ['c07', 'c08'],
    );
  });

  it('leaves a range when the skipped commits border the culprit', async () => {
    const { measure } = oracle(11, { 10: 'skipped', 9: 'skipped' });
    const r = await runBisect(COMMITS, measure);
    assert.deepEqual(r.outcome, {
      kind: 'range',
      commits: ['c09', 'c10', 'c11'],
      first: 9,
      last: 11,
      untestable: [
        { commit: 'c09', index: 9, why: 'skipped' },
        { commit: 'c10', index: 10, why: 'skipped' },
      ],
      stopped: 'untestable',
      ratio: ratio(0.85),
    });
  });

  it('gives an undecided step its repeat, and uses the repeat when it decides', async () => {
    const { measure, calls } = oracle(11, { 7: ['undecided', 'same'] });
    const r = await runBisect(COMMITS, measure);
    assert.equal(r.outcome.kind === 'culprit' && r.outcome.commit, 'c11');
    assert.deepEqual(
      calls.slice(1, 4).map((c) => `${c.commit}/${c.attempt}`),
      ['c07/1', 'c07/2', 'c11/1'],
    );
    assert.equal(r.steps.length, 6, 'the issue: at most 6 steps with one repeat');
  });

  it('sets aside a commit undecided twice, and names the range it leaves', async () => {
    const { measure } = oracle(11, { 11: 'undecided' });
    const r = await runBisect(COMMITS, measure);
    assert.equal(r.outcome.kind, 'range');
    if (r.outcome.kind !== 'range') return;
    assert.deepEqual(r.outcome.commits, ['c11', 'c12']);
    assert.deepEqual(r.outcome.untestable, [{ commit: 'c11', index: 11, why: 'undecided' }]);
    assert.equal(r.steps.filter((s) => s.commit === 'c11').length, 2);
  });

  it('stops at the step budget with the range still open', async () => {
    const { measure } = oracle(11);
    const r = await runBisect(COMMITS, measure, { maxSteps: 3 });
    assert.equal(r.steps.length, 3);
    assert.deepEqual(r.outcome.kind === 'range' && [r.outcome.first, r.outcome.last, r.outcome.stopped], [
      8,
      11,
      'step-budget',
    ]);
  });

  it('names the only commit when good and bad are neighbours', async () => {
    const { measure } = oracle(0);
    const r = await runBisect(['c00'], measure);
    assert.deepEqual(r.outcome.kind === 'culprit' && r.outcome.commit, 'c00');
    assert.equal(r.steps.length, 1);
  });

  it('stops when the good commit itself fails to run', async () => {
    const measure: MeasureFn = async (_commit, c) =>
      c.purpose === 'check'
        ? { verdict: 'slower', ratio: ratio(0.85) }
        : { verdict: 'skipped', failure: { phase: 'run', side: 'good', detail: 'crash: exit 1' } };
    const r = await runBisect(COMMITS, measure);
    assert.equal(r.outcome.kind, 'unmeasurable');
    assert.equal(r.steps.length, 2);
  });

  it('rejects an empty or repeated commit list with what to fix', async () => {
    const { measure } = oracle(0);
    await assert.rejects(runBisect([], measure), /no commits between good and bad/);
    await assert.rejects(runBisect(['a', 'a'], measure), /commit a appears twice/);
  });
});

describe('nextIndex', () => {
  it('takes the middle, then its nearest placeable neighbours, after before before', () => {
    assert.equal(nextIndex(-1, 15, new Map()), 7);
    assert.equal(nextIndex(-1, 15, new Map([[7, 'skipped']])), 8);
    assert.equal(
      nextIndex(
        -1,
        15,
        new Map([
          [7, 1],
          [8, 1],
        ]),
      ),
      6,
    );
    assert.equal(nextIndex(8, 10, new Map()), 9);
    assert.equal(nextIndex(8, 10, new Map([[9, 1]])), null);
    assert.equal(nextIndex(9, 10, new Map()), null);
  });
});
