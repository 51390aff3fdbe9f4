// The paired gate's ledger: which run a night is measured against (the pin, else the newest accepted or
// first night; never a flagged or undecided one), and what a night records (first, same-commit without a
// measurement, the paired verdict otherwise).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgeNight, type MeasureNightFn } from '../../../harness/history/gate.js';
import type { RunEntry } from '../../../harness/history/index.js';
import { nightText, referenceOf, type Night } from '../../../harness/history/nights.js';
import type { NightMeasurement } from '../../../harness/search/nightly-gate.js';

const run = (i: number, commit: string | null = `c${i}`): RunEntry =>
  ({
    run_id: `r${i}`,
    dir: `/reports/e/r${i}`,
    started_at: `2026-12-0${i}T02:30:00Z`,
    git_commit: commit,
    chosen: {},
  }) as unknown as RunEntry;

const measured = (verdict: NightMeasurement['verdict'], estimate = 0.8): MeasureNightFn => {
  const calls: [string, string][] = [];
  const fn: MeasureNightFn = (ref, now) => {
    calls.push([ref.git_commit, now.git_commit]);
    return Promise.resolve({
      measurement: {
        verdict,
        ratio: {
          estimate,
          low: estimate - 0.05,
          high: estimate + 0.05,
          level: 0.95,
          p: 0.01,
          n: 5,
          df: 4,
          se: 0.02,
          method: 'paired-t',
        },
        rounds: 5,
        trials: 10,
        failure: null,
      },
      gateDir: '/reports/gate/e/x',
      bisect: ['bisect', '--good', ref.git_commit, '--bad', now.git_commit],
    });
  };
  return Object.assign(fn, { calls });
};

describe('the gate ledger', () => {
  it("starts with the first night, skips the reference's own commit, and measures a new one", async () => {
    const first = await judgeNight(run(1), null, 0.05, measured('regression'));
    assert.equal(first.verdict, 'first');
    assert.match(nightText(first), /starts the gate's ledger: its commit is the reference from now on/);
    const m = measured('regression');
    const same = await judgeNight(run(2, 'c1'), run(1), 0.05, m);
    assert.equal(same.verdict, 'same-commit');
    assert.equal((m as unknown as { calls: unknown[] }).calls.length, 0, 'nothing is measured for the same commit');
    const flagged = await judgeNight(run(3), run(1), 0.05, m);
    assert.deepEqual((m as unknown as { calls: unknown[] }).calls, [['c1', 'c3']]);
    assert.equal(flagged.verdict, 'flagged');
    assert.deepEqual(flagged.bisect, ['bisect', '--good', 'c1', '--bad', 'c3']);
    assert.match(
      nightText(flagged),
      /^REGRESSION: c3 against the reference c1 \(run r1\): tonight\/reference 0\.800x \[0\.750x, 0\.850x\] over 5 paired rounds, a slowdown beyond 5%$/,
    );
    const accepted = await judgeNight(run(4), run(1), 0.05, measured('no-regression', 0.99));
    assert.equal(accepted.verdict, 'accepted');
    assert.equal(accepted.bisect, null);
    await assert.rejects(judgeNight(run(5, null), run(1), 0.05, m), /records no git commit/);
  });

  it('never takes a flagged or undecided night as the reference; the pin and accepted runs are', () => {
    const runs = [1, 2, 3, 4, 5].map((i) => run(i));
    const night = (i: number, verdict: Night['verdict']) => ({ run_id: `r${i}`, verdict }) as Night;
    const ledger = [night(1, 'first'), night(2, 'accepted'), night(3, 'flagged'), night(4, 'undecided')];
    assert.equal(referenceOf(runs, runs[4]!, ledger, null, [])?.run_id, 'r2');
    // A flagged night accepted by hand (tunebench baseline accept) is a reference.
    assert.equal(referenceOf(runs, runs[4]!, ledger, null, [{ run_id: 'r3', at: 'x' }])?.run_id, 'r3');
    // A pin wins, from the next night on.
    assert.equal(referenceOf(runs, runs[4]!, ledger, { run_id: 'r1', set_at: 'x', env_key: 'k' }, [])?.run_id, 'r1');
    assert.equal(referenceOf(runs, runs[0]!, [], null, []), null);
  });
});
