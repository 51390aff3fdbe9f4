// A bisection step measured by runCompare: the verdicts on simulated trials, the band taken from
// the regression, the repeat that replays its first rounds and adds more, failures as skips; and
// whole bisections of a simulated 16-commit history (the 15% step at commit 11).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareOracle, stepBand } from '../../../harness/search/bisect-step.js';
import type { ArmTrialFn } from '../../../harness/search/sweep.js';
import { BISECT, GOOD, history, simTrials, simulatedBisect } from '../../support/bisect-sim.js';

const interval = (estimate: number) => ({ estimate, low: estimate - 0.03, high: estimate + 0.03, level: 0.95 });

describe('stepBand', () => {
  it('is half the regression, at least the compare band', () => {
    assert.equal(stepBand(null, 0.02), 0.02);
    assert.ok(Math.abs(stepBand(interval(0.9), 0.02) - 0.05) < 1e-12);
    assert.equal(stepBand(interval(0.99), 0.02), 0.02);
    assert.equal(stepBand(interval(1.1), 0.02), 0.02);
    assert.equal(stepBand(interval(0.01), 0.02), 0.495);
  });
});

describe('compareOracle', () => {
  const h = history(16, { culprit: 11, step: 0.15, cv: 0.02, broken: new Set([7]) });

  it('calls a commit past the culprit slower and one before it the same, through runCompare', async () => {
    const { run } = simTrials(h, 1);
    const measure = compareOracle({ run, good: GOOD, ...BISECT });
    const bad = await measure('c15', { purpose: 'check', attempt: 1, bad: null });
    assert.equal(bad.verdict, 'slower');
    assert.ok(bad.ratio && bad.ratio.high < 0.98 && bad.ratio.low < 1 / 1.15 && bad.ratio.high > 1 / 1.15);
    assert.equal(bad.band, 0.02);
    assert.equal(bad.pairs?.length, bad.rounds);
    assert.equal(bad.trials, 2 * bad.rounds!);
    const before = await measure('c03', { purpose: 'step', attempt: 1, bad: bad.ratio });
    assert.equal(before.verdict, 'same');
    assert.ok(Math.abs(before.band! - (1 - bad.ratio.estimate) / 2) < 1e-12);
    const after = await measure('c12', { purpose: 'step', attempt: 1, bad: bad.ratio });
    assert.equal(after.verdict, 'slower');
  });

  it('skips a commit whose runs fail, saying which side failed', async () => {
    const { run } = simTrials(h, 2);
    const m = await compareOracle({ run, good: GOOD, ...BISECT })('c07', { purpose: 'step', attempt: 1, bad: null });
    assert.equal(m.verdict, 'skipped');
    assert.deepEqual(m.failure, { phase: 'run', side: 'commit', detail: 'crash: exit status 1' });
  });

  it('repeats an undecided step by replaying its rounds and adding rounds up to the larger budget', async () => {
    // No noise band can be met with 20% noise and a 1% band in 20 rounds: undecided.
    const noisy = history(4, { culprit: 2, step: 0.05, cv: 0.2 });
    const { run, count } = simTrials(noisy, 3);
    const calls: number[] = [];
    const counted: ArmTrialFn = async (config, o) => {
      calls.push(o.round);
      return run(config, o);
    };
    const opts = { run: counted, good: GOOD, ...BISECT, noiseBand: 0.01 };
    const measure = compareOracle(opts);
    const first = await measure('c01', { purpose: 'check', attempt: 1, bad: null });
    assert.equal(first.verdict, 'undecided');
    assert.equal(first.rounds, 20);
    assert.equal(count(), 40);
    const second = await measure('c01', { purpose: 'check', attempt: 2, bad: null });
    assert.equal(second.rounds, second.verdict === 'undecided' ? 40 : second.rounds);
    assert.ok(second.rounds! > 20);
    assert.equal(second.trials, 2 * (second.rounds! - 20), 'only the added rounds are run');
    assert.ok(calls.slice(40).every((r) => r >= 20));
    assert.deepEqual(second.pairs!.slice(0, 20), first.pairs);
  });

  it('rejects a repeat budget below the first', () => {
    const { run } = simTrials(h, 4);
    assert.throws(() => compareOracle({ run, good: GOOD, ...BISECT, extendedMaxRounds: 10 }), /raise the repeat/);
  });
});

describe('a simulated bisection through the shipped compare code', () => {
  it('names commit 11 of 16 (15% slower, 2% noise) within 6 steps', async () => {
    for (const seed of [1, 2, 3]) {
      const r = await simulatedBisect(history(16, { culprit: 11, step: 0.15, cv: 0.02 }), seed);
      assert.equal(r.outcome.kind === 'culprit' && r.outcome.commit, 'c11', `seed ${seed}`);
      assert.ok(r.steps.length <= 6, `seed ${seed}: ${r.steps.length} steps`);
    }
  });

  it('ends with no culprit when nothing got slower', async () => {
    const r = await simulatedBisect(history(16, { culprit: null, step: 0, cv: 0.02 }), 5);
    assert.equal(r.outcome.kind, 'no-culprit');
    assert.equal(r.steps.length <= 2, true);
  });

  it('skips commit 7, which does not run, and still names commit 11', async () => {
    const r = await simulatedBisect(history(16, { culprit: 11, step: 0.15, cv: 0.02, broken: new Set([7]) }), 6);
    assert.equal(r.outcome.kind === 'culprit' && r.outcome.commit, 'c11');
    assert.deepEqual(
      r.steps.filter((s) => s.verdict === 'skipped').map((s) => s.commit),
      ['c07'],
    );
  });
});
