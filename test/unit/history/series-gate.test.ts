// The series gate of `tunebench history` on index entries: which metrics it gates, how an alarm
// waits for its confirmation, how a confirmation decides (or, when it could not measure, leaves the
// alarm standing), and that confirmed values of earlier nights enter the series.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunEntry } from '../../../harness/history/index.js';
import {
  NIGHTS_NEEDED,
  seriesGate,
  type Confirmation,
  type SeriesGateOptions,
} from '../../../harness/history/series-gate.js';
import { createRng } from '../../../harness/stats/rng.js';

/** Nights with two throughput metrics and a max batch; `factor(i)` scales night i. */
function runs(n: number, factor: (i: number) => number, seed = 1): RunEntry[] {
  const u = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const f = factor(i) * (1 + (u() * 2 - 1) * 0.02);
    return {
      experiment: 'e',
      run_id: `n${String(i + 1).padStart(2, '0')}`,
      dir: `/r/e/n${i + 1}`,
      started_at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
      env_key: 'k',
      env_label: 'cpu',
      git_commit: null,
      chosen: { batch_size: 64 },
      metrics: [
        { name: 'mb max batch_size', stage: 'mb', unit: 'samples', value: 64, low: null, high: null },
        {
          name: 'sw samples/s (chosen config)',
          stage: 'sw',
          unit: 'samples/s',
          value: 1000 * f,
          low: null,
          high: null,
        },
        { name: 'cl speedup', stage: 'cl', unit: 'x', value: 1.5 * f, low: null, high: null },
      ],
    };
  });
}

const opts = (o: Partial<SeriesGateOptions> = {}): SeriesGateOptions => ({
  alpha: 0.02,
  minDrop: 0.05,
  acknowledged: new Set(),
  confirmations: [],
  confirm: true,
  ...o,
});
const confirmation = (run_id: string, metric: string, value: number | null): Confirmation => ({
  run_id,
  metric,
  at: '',
  value,
  trials: 10,
  reference_run: 'n05',
  same_config: true,
  config_ratio: null,
  run_dir: null,
  error: value === null ? 'the workload failed' : null,
});

describe('series gate', () => {
  it('gates every metric but the max batch, and warms up until it has enough nights', () => {
    const early = seriesGate(
      runs(NIGHTS_NEEDED - 1, () => 1),
      opts(),
    );
    assert.equal(early.warm_up, true);
    assert.deepEqual(
      early.metrics.map((m) => m.name),
      ['sw samples/s (chosen config)', 'cl speedup'],
    );
    const ready = seriesGate(
      runs(NIGHTS_NEEDED, () => 1),
      opts(),
    );
    assert.equal(ready.warm_up, false);
    assert.ok(ready.metrics.every((m) => m.status === 'accepted' && !m.failing && !m.pending));
    // Two metrics, two looks: the budget split four ways.
    assert.ok(Math.abs(ready.per_test_alpha! - 0.02 / 4) < 1e-12);
  });

  it('a regression alarm waits for its confirmation; without confirmation (--no-confirm) it fails at once', () => {
    const rs = runs(20, (i) => (i === 19 ? 0.8 : 1));
    const waiting = seriesGate(rs, opts());
    const sw = waiting.metrics.find((m) => m.name.startsWith('sw'))!;
    assert.equal(sw.alarm_direction, 'regression');
    assert.equal(sw.pending, true);
    assert.equal(sw.failing, false);
    const direct = seriesGate(rs, opts({ confirm: false }));
    assert.ok(direct.metrics.every((m) => m.failing && !m.pending));
    // Within the threshold it is no alarm at all.
    assert.ok(seriesGate(rs, opts({ minDrop: 0.25 })).metrics.every((m) => m.alarm_direction === null && !m.failing));
  });

  it(
    'a confirmation decides: a normal re-measurement clears the alarm, a slow one confirms it, ' +
      'none at all leaves it standing',
    () => {
      const rs = runs(20, (i) => (i === 19 ? 0.8 : 1));
      const cleared = seriesGate(
        rs,
        opts({ confirmations: [confirmation('n20', 'sw samples/s (chosen config)', 1001)] }),
      );
      const sw = cleared.metrics.find((m) => m.name.startsWith('sw'))!;
      assert.equal(sw.failing, false);
      assert.equal(sw.status, 'accepted');
      assert.ok(sw.alarm!.ratio < 0.85 && Math.abs(sw.test!.ratio - 1) < 0.03, JSON.stringify([sw.alarm, sw.test]));
      // The other metric had no confirmation yet: still pending.
      assert.equal(cleared.metrics.find((m) => m.name === 'cl speedup')!.pending, true);
      const confirmed = seriesGate(
        rs,
        opts({ confirmations: [confirmation('n20', 'sw samples/s (chosen config)', 790)] }),
      ).metrics.find((m) => m.name.startsWith('sw'))!;
      assert.equal(confirmed.failing, true);
      assert.equal(confirmed.status, 'flagged');
      const failed = seriesGate(
        rs,
        opts({ confirmations: [confirmation('n20', 'sw samples/s (chosen config)', null)] }),
      ).metrics.find((m) => m.name.startsWith('sw'))!;
      assert.equal(failed.failing, true, 'a confirmation that could not measure must not pass the gate');
    },
  );

  it('a confirmed value of an earlier night replaces its measured value in the series', () => {
    // Night 15 measured 20% low, and its confirmation measured it normal.
    const rs = runs(30, (i) => (i === 14 ? 0.8 : 1));
    const raw = seriesGate(rs, opts({ confirm: false })).metrics[0]!.test!;
    const fixed = seriesGate(
      rs,
      opts({ confirm: false, confirmations: [confirmation('n15', 'sw samples/s (chosen config)', 1000)] }),
    ).metrics[0]!.test!;
    // Measured, night 15 was flagged and stays out of the reference (an outlier), with any night after it
    // that the drop pulled down in a look-back: nights 1-27 less at least one.
    assert.ok(raw.reference_nights <= 26, String(raw.reference_nights));
    // Re-measured, it is an ordinary night of the level.
    assert.equal(fixed.reference_nights, 27);
    assert.ok(fixed.spread < raw.spread + 1e-12);
  });
});
