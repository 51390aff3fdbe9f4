// The nightly series gate: its pieces (variance of a mean of AR(1) nights, the pooled spread, the
// window test), the night statuses it replays (warm-up, accepted, flagged, outlier, persisted,
// acknowledged, missing), and its false-alarm rate on seeded stationary histories.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  levelSpread,
  meanVarianceFactor,
  MIN_SPREAD,
  NightlyGate,
  nightlyOptions,
  replayNights,
  windowTest,
} from '../../../harness/stats/nightly.js';
import { createRng } from '../../../harness/stats/rng.js';
import { gaussian } from '../../support/noise-sim.js';

/** n nights around `level` with log-normal spread `sd` (seeded). */
function nights(n: number, sd: number, seed: number, level = 100): number[] {
  const z = gaussian(createRng(seed));
  return Array.from({ length: n }, () => level * Math.exp(sd * z()));
}

describe('nightly gate: pieces', () => {
  it('meanVarianceFactor is 1/n for independent nights and grows with the autocorrelation', () => {
    assert.equal(meanVarianceFactor(1, 0.6), 1);
    assert.equal(meanVarianceFactor(4, 0), 0.25);
    assert.ok(Math.abs(meanVarianceFactor(2, 0.5) - 0.75) < 1e-12);
    assert.ok(Math.abs(meanVarianceFactor(3, 0.6) - (3 + 2 * (2 * 0.6 + 0.36)) / 9) < 1e-12);
    assert.equal(meanVarianceFactor(0, 0), Infinity);
  });

  it('levelSpread pools levels about their own means and floors a constant series', () => {
    assert.equal(levelSpread([[Math.log(5), Math.log(5), Math.log(5)]]).sd, MIN_SPREAD);
    // A step between two levels does not count as spread: the same within-level spread either way.
    const a = nights(30, 0.05, 1).map(Math.log);
    const b = nights(30, 0.05, 2, 80).map(Math.log);
    const pooled = levelSpread([a, b]);
    const merged = levelSpread([[...a, ...b]]);
    assert.ok(pooled.sd > 0.035 && pooled.sd < 0.07, `pooled sd ${pooled.sd}`);
    assert.ok(merged.sd > 2 * pooled.sd, `one level across the step: ${merged.sd} vs ${pooled.sd}`);
    assert.equal(pooled.df, 58);
  });

  it('windowTest finds a drop of the recent nights with a small p and its ratio', () => {
    const ref = nights(20, 0.02, 3).map(Math.log);
    const spread = levelSpread([ref]);
    const drop = windowTest([Math.log(80)], ref, spread, [1, 3]);
    assert.ok(drop && drop.pLower < 1e-6 && drop.pUpper > 0.99, JSON.stringify(drop));
    assert.ok(Math.abs(drop.ratio - 80 / Math.exp(ref.reduce((s, x) => s + x, 0) / ref.length)) < 1e-9);
    const same = windowTest([Math.log(100)], ref, spread, [1, 3]);
    assert.ok(same && same.pLower > 0.05 && same.pUpper > 0.05, JSON.stringify(same));
    // The look-back with the smallest p-value wins: three slow nights beat the last one alone.
    const three = windowTest([Math.log(95), Math.log(95), Math.log(95)], ref, spread, [1, 3]);
    assert.equal(three?.k, 3);
  });

  it('rejects bad options by name', () => {
    assert.throws(() => nightlyOptions({ window: 1 }), /window must be an integer >= 2/);
    assert.throws(() => nightlyOptions({ looks: [3, 1] }), /looks must be increasing integers/);
    assert.throws(() => nightlyOptions({ alpha: 0.7 }), /alpha must lie in \(0, 0.5\)/);
    assert.throws(() => nightlyOptions({ minReference: 40 }), /minReference \(40\) must not exceed window \(30\)/);
    assert.throws(() => new NightlyGate(1).evaluate([0]), /positive finite numbers or null, got 0/);
  });
});

describe('nightly gate: replay', () => {
  it('warms up, flags a one-night drop, and calls it an outlier when the next night is back', () => {
    const series = [...nights(14, 0.01, 4), 80, 100];
    const [r] = replayNights([series]);
    const status = r!.nights.map((n) => n.status);
    // Five reference nights before the gap of max(looks) - 1 = 2 nights: 7 warm-up nights.
    assert.deepEqual(status.slice(0, 7), Array(7).fill('warm-up'));
    assert.ok(
      status.slice(7, 14).every((s) => s === 'accepted'),
      status.join(' '),
    );
    assert.equal(status[14], 'outlier');
    assert.equal(r!.nights[14]!.direction, 'regression');
    assert.equal(status[15], 'accepted');
    assert.deepEqual(r!.changes, []);
    // The outlier stays out of every later reference.
    const later = replayNights([[...series, ...nights(10, 0.01, 5)]])[0]!;
    assert.ok(later.nights.slice(16).every((n) => !n.test!.reference.includes(14)));
  });

  it('a persisting 20% drop is flagged each night, then becomes the new level after `persist` nights', () => {
    const base = nights(20, 0.01, 6);
    const after = nights(8, 0.01, 7, 80);
    const [r] = replayNights([[...base, ...after]], new Set(), { persist: 4 });
    const tail = r!.nights.slice(20);
    assert.deepEqual(
      tail.slice(0, 4).map((n) => n.status),
      ['flagged', 'flagged', 'flagged', 'persisted'],
    );
    assert.ok(tail.slice(0, 4).every((n) => n.direction === 'regression'));
    assert.ok(
      tail.slice(4).every((n) => n.status === 'accepted'),
      tail.map((n) => n.status).join(' '),
    );
    assert.equal(r!.changes.length, 1);
    assert.equal(r!.changes[0]!.index, 20);
    assert.equal(r!.changes[0]!.how, 'persisted');
    assert.ok(Math.abs(r!.changes[0]!.ratio - 0.8) < 0.02, String(r!.changes[0]!.ratio));
  });

  it('an acknowledged night starts the new level at once; a rise is an improvement, not a regression', () => {
    const series = [...nights(20, 0.01, 8), ...nights(4, 0.01, 9, 120)];
    const [r] = replayNights([series], new Set([21]));
    assert.equal(r!.nights[20]!.direction, 'improvement');
    assert.equal(r!.nights[21]!.status, 'acknowledged');
    assert.deepEqual(
      r!.changes.map((c) => [c.index, c.how, c.direction]),
      [[20, 'acknowledged', 'improvement']],
    );
    assert.ok(r!.nights.slice(22).every((n) => n.status === 'accepted'));
  });

  it(
    'an acknowledged night that is not flagged (a pinned baseline) ' +
      'starts a level too: later nights are tested against it',
    () => {
      const series = [...nights(14, 0.01, 10), ...nights(6, 0.01, 11, 80)];
      const [free] = replayNights([series]);
      // Without the pin the drop at night 14 is flagged against the nights before it.
      assert.equal(free!.nights[14]!.direction, 'regression');
      const [pinned] = replayNights([series], new Set([16]));
      assert.equal(pinned!.nights[16]!.status, 'acknowledged');
      assert.deepEqual(
        pinned!.changes.map((c) => [c.index, c.how, c.direction]),
        [[14, 'acknowledged', 'regression']],
      );
      // Pinning an unflagged night of the old level: nights after it are tested against it and its successors.
      const flat = nights(20, 0.01, 12);
      const [p] = replayNights([flat], new Set([5]));
      assert.deepEqual(
        p!.changes.map((c) => [c.index, c.how]),
        [[5, 'acknowledged']],
      );
      assert.equal(p!.nights[5]!.status, 'acknowledged');
      assert.ok(
        p!.nights.slice(12).every((n) => n.status === 'accepted' && n.test!.reference[0]! >= 5),
        JSON.stringify(p!.nights.slice(12).map((n) => n.test?.reference)),
      );
    },
  );

  it('minDrop ignores a significant drop smaller than the threshold; missing nights are skipped', () => {
    const series: (number | null)[] = [...nights(20, 0.002, 10), null, 97];
    assert.equal(replayNights([series])[0]!.nights[21]!.direction, 'regression');
    const r = replayNights([series], new Set(), { minDrop: 0.05 })[0]!;
    assert.equal(r.nights[20]!.status, 'missing');
    assert.equal(r.nights[21]!.status, 'accepted');
  });

  it('splits the night budget over the metrics tested and the looks', () => {
    const gate = new NightlyGate(3, { alpha: 0.03 });
    for (let i = 0; i < 12; i++) gate.commit(gate.evaluate([100 + (i % 3), 50 + (i % 2), 10 + (i % 4) / 10]));
    assert.ok(Math.abs(gate.evaluate([100, 50, null]).alpha! - 0.03 / (2 * 2)) < 1e-15);
    assert.throws(
      () => gate.commit({ ...gate.evaluate([100, 50, 10]), index: 3 }),
      /night 3 evaluated, but night 12 is next/,
    );
  });

  it('alarms on at most its budget of stationary nights (200 seeded histories, 4 metrics, 60 nights)', () => {
    let tested = 0;
    let alarms = 0;
    for (let s = 0; s < 200; s++) {
      const z = gaussian(createRng(900 + s));
      const gate = new NightlyGate(4);
      for (let i = 0; i < 60; i++) {
        const shared = z();
        const ev = gate.evaluate(
          Array.from({ length: 4 }, () => 100 * Math.exp(0.05 * (Math.SQRT1_2 * shared + Math.SQRT1_2 * z()))),
        );
        if (ev.tests.some((t) => t)) tested += 1;
        if (ev.flags.includes('regression')) alarms += 1;
        gate.commit(ev);
      }
    }
    assert.ok(tested > 9000, `${tested} nights tested`);
    // The budget (4%) holds for each direction; Bonferroni over the metrics and looks keeps regressions below it.
    assert.ok(alarms / tested <= 0.04, `regression alarms on ${((100 * alarms) / tested).toFixed(2)}% of nights`);
    assert.ok(alarms > 0, 'a gate that never alarms cannot find a regression either');
  });
});
