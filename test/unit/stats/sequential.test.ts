// The t distribution, the group-sequential look plan, the log-scale intervals, the round-blocked
// layout, and the calibration of the shipped strategies with small fixed seeds (the full grid is
// `npm run bench:stats`).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockedDifference, blockedLayout } from '../../../harness/stats/blocked.js';
import {
  logMeanInterval,
  pairedRatioInterval,
  pooledLogMeanInterval,
  welchRatioInterval,
} from '../../../harness/stats/log-ratio.js';
import { lookPlan } from '../../../harness/stats/sequential.js';
import { lnGamma, tCdf, tQuantile, tTwoSidedP } from '../../../harness/stats/student-t.js';
import { simulateClaim, simulateCompare, simulateRace } from '../../support/calibration.js';
import { NOISE_GRID } from '../../support/noise-sim.js';

const close = (a: number, b: number, tol: number) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

describe("Student's t", () => {
  it('matches published quantiles', () => {
    // Standard tables: t(0.975; 1) = 12.706, t(0.975; 4) = 2.776, t(0.975; 19) = 2.093,
    // t(0.995; 10) = 3.169, t(0.9995; 30) = 3.646.
    for (const [p, df, q] of [
      [0.975, 1, 12.7062],
      [0.975, 4, 2.77645],
      [0.975, 19, 2.09302],
      [0.995, 10, 3.16927],
      [0.9995, 30, 3.64596],
      [0.95, 1000, 1.64638],
    ] as const) {
      close(tQuantile(p, df), q, 2e-4);
      close(tCdf(q, df), p, 2e-5);
    }
    close(tQuantile(0.025, 4), -2.77645, 2e-4);
    close(tTwoSidedP(2.776445, 4), 0.05, 1e-5);
    close(lnGamma(5), Math.log(24), 1e-10);
    close(lnGamma(0.5), Math.log(Math.sqrt(Math.PI)), 1e-10);
    assert.throws(() => tQuantile(1, 3), /p must lie in \(0, 1\)/);
  });
});

describe('lookPlan', () => {
  it('plans looks at about 1.4x steps and spends alpha * t^2, all of it by the last look', () => {
    const plan = lookPlan(5, 20);
    assert.deepEqual(
      plan.map((l) => l.n),
      [5, 7, 10, 14, 20],
    );
    close(plan[0]!.alpha, 0.05 * (5 / 20) ** 2, 1e-12);
    close(
      plan.reduce((a, l) => a + l.alpha, 0),
      0.05,
      1e-12,
    );
    assert.ok(plan.every((l, i) => i === 0 || l.alpha > 0));
    assert.deepEqual(
      lookPlan(3, 8).map((l) => l.n),
      [3, 4, 6, 8],
    );
    assert.deepEqual(
      lookPlan(5, 5).map((l) => l.n),
      [5],
    );
    assert.throws(() => lookPlan(6, 5), /1 <= min <= max/);
  });
});

describe('log-scale intervals', () => {
  it('pairs: the geometric-mean ratio with a t interval, none with fewer than 3 pairs', () => {
    const ratios = [1.1, 1.12, 1.08, 1.1, 1.1];
    const ci = pairedRatioInterval(ratios, 0.05)!;
    const logs = ratios.map(Math.log);
    const mean = logs.reduce((a, b) => a + b, 0) / 5;
    const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / 4);
    close(ci.estimate, Math.exp(mean), 1e-12);
    close(ci.low, Math.exp(mean - 2.776445 * (sd / Math.sqrt(5))), 1e-6);
    assert.ok(ci.p! < 0.001 && ci.low > 1);
    assert.equal(pairedRatioInterval([1.1, 1.2], 0.05), null, 'two pairs are not enough');
    const same = pairedRatioInterval([1.03, 1.03, 1.03], 0.05)!;
    assert.deepEqual([same.low, same.high], [same.estimate, same.estimate], 'identical in every pair');
    assert.throws(() => pairedRatioInterval([1, 0, 1], 0.05), /positive finite/);
  });

  it("one config: its own spread with 3 trials, the stage's pooled spread with fewer", () => {
    assert.equal(logMeanInterval([100, 101], 0.05), null);
    const own = logMeanInterval([100, 102, 98], 0.05)!;
    assert.ok(own.low < 100 && own.high > 100);
    const pooled = pooledLogMeanInterval([100], 0.02, 10, 0.05)!;
    close(pooled.high / pooled.estimate, Math.exp(tQuantile(0.975, 10) * 0.02), 1e-9);
    assert.equal(pooledLogMeanInterval([100], 0.02, 0, 0.05), null);
  });

  it('two runs: Welch on the log scale, none with fewer than 3 trials a side', () => {
    const r = welchRatioInterval([100, 101, 99, 100], [90, 91, 89, 90], 0.05)!;
    close(r.estimate, 0.9, 0.002);
    assert.ok(r.high < 0.92 && r.p! < 1e-4);
    assert.equal(welchRatioInterval([100, 101], [90, 91, 89], 0.05), null);
  });

  it("the round-blocked layout removes a round's common load", () => {
    // Config 1 is 5% slower in every round; round 2 slows everyone by 30%.
    const y = [
      [0, -0.3, 0.01, 0],
      [-0.05, -0.35, -0.04, -0.05],
    ];
    const layout = blockedLayout(y)!;
    assert.equal(layout.df, 3);
    const d = blockedDifference(layout, 1, 0, 0.05);
    assert.ok(d.high < 1 && d.pSlower < 0.01, 'the common slowdown does not hide the difference');
    assert.equal(blockedLayout([[0, 1]]), null);
  });
});

describe('calibration with small fixed seeds (through runCompare, runClaimPairs, runSweep)', () => {
  const mid = NOISE_GRID[1]!;
  const bursts = NOISE_GRID[5]!;
  it('A/A compares are rarely called different, and their ratio CIs cover 1', async () => {
    for (const noise of [mid, bursts]) {
      const s = await simulateCompare(noise, 1, 300, 11);
      assert.ok(s.wrong <= 0.05, `${noise.name}: ${s.wrong}`);
      assert.ok(s.coverage >= 0.93, `${noise.name}: coverage ${s.coverage}`);
    }
  });

  it('a planted 10% is detected at 3% noise, and its CI covers 1.1', async () => {
    const s = await simulateCompare(mid, 1.1, 200, 12);
    assert.ok(s.detected >= 0.9, `power ${s.detected}`);
    assert.ok(s.coverage >= 0.93, `coverage ${s.coverage}`);
  });

  it('an A/A pair does not confirm "5% faster"; a real slowdown falls short; 2.5x confirms "2-3x"', async () => {
    const aa = await simulateClaim(mid, '5% faster', 1, 300, 13);
    assert.ok(aa.rates.confirmed <= 0.02, `A/A confirmed ${aa.rates.confirmed}`);
    const slow = await simulateClaim(mid, '5% faster', 0.97, 100, 14);
    assert.equal(slow.rates.confirmed, 0);
    assert.ok(slow.rates['falls short'] >= 0.9);
    const planted = await simulateClaim(mid, '2-3x', 2.5, 100, 15);
    assert.ok(planted.rates.confirmed >= 0.95);
    assert.ok(planted.coverage >= 0.93);
  });

  it('a race keeps the true best when it leads by 5%, and rarely eliminates among identical configs', async () => {
    const lead = await simulateRace(mid, [1.05, 1, 1, 1, 1, 1], 100, 16);
    assert.ok(lead.bestEliminated <= 0.05, `best eliminated ${lead.bestEliminated}`);
    assert.ok(lead.medianRegret <= 0.01, `regret ${lead.medianRegret}`);
    const same = await simulateRace(mid, [1, 1, 1, 1, 1, 1], 300, 17);
    assert.ok(same.falseSignificance <= 0.05, `identical configs eliminated in ${same.falseSignificance}`);
    const spread = await simulateRace(mid, [1.1, 1, 0.97, 0.95, 0.9, 0.8], 100, 18);
    assert.ok(spread.trialSeconds < 0.7 * spread.gridTrialSeconds, 'clearly worse configs stop early');
  });
});
