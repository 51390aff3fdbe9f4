// The history's findings are typed: an alarm (regression, config change, a baseline from elsewhere) or a
// note, and the renderers set alarms apart by that type, never by a finding's wording.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alarming, findings } from '../../../harness/history/render.js';
import type { ExperimentHistory } from '../../../harness/history/trend.js';

const history = {
  gate: {
    baseline: { pinned: false, run_id: 'night-0001' },
    env_mismatch: ['host a100-node vs h100-node'],
    regressions: [{ metric: 'samples/s', throughput_ratio: { estimate: 0.9, low: 0.85, high: 0.95 } }],
    config_changes: [{ param: 'num_workers', before: 2, after: 4 }],
    config_ties: [{ param: 'prefetch_factor', before: 2, after: 4, why: 'stage loader: prefetch_factor=2 is tied' }],
    notes: ['REGRESSION is a word this note quotes; it is still a note'],
    latest: { run_id: 'night-0002' },
    series: null,
  },
  metrics: [],
} as unknown as ExperimentHistory;

describe('history findings', () => {
  it('are typed: the environment, the regression and the config change are alarms, a note is a note', () => {
    const found = findings(history, 5);
    assert.deepEqual(
      found.map((f) => f.kind),
      ['environment', 'regression', 'config-change', 'note', 'note'],
    );
    assert.deepEqual(found.map(alarming), [true, true, true, false, false]);
    assert.match(
      found[1]!.text,
      /^REGRESSION: samples\/s is -10\.0% \[-15\.0%, -5\.0%\] vs previous run night-0001 \(beyond 5%\)$/,
    );
    assert.match(found[2]!.text, /^CONFIG CHANGE: num_workers 2 -> 4 vs previous run night-0001$/);
    // A value that flipped between tied configs is a note, never a config change.
    assert.match(
      found.find((f) => f.text.startsWith('prefetch_factor'))!.text,
      /^prefetch_factor: tied, kept prefetch_factor=2 \(tonight picked 4 .*\); not a config change$/,
    );
  });
});
