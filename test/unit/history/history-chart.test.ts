// The history chart a person reads: times in UTC on a 24-hour clock, each point's commit on hover, and the
// nights the paired gate flagged marked on every metric's row.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { historyChart } from '../../../harness/history/chart.js';
import type { ExperimentHistory } from '../../../harness/history/trend.js';
import type { Night } from '../../../harness/history/nights.js';
import { drawChart } from '../../../harness/report/render.js';

const night = (run_id: string, started_at: string, verdict: Night['verdict']): Night => ({
  run_id,
  dir: `/reports/e/${run_id}`,
  commit: `${run_id}${'0'.repeat(40)}`.slice(0, 40),
  started_at,
  verdict,
  reference: null,
  ratio: verdict === 'flagged' ? { estimate: 0.83, low: 0.78, high: 0.88 } : null,
  rounds: 10,
  trials: 20,
  threshold: 0.05,
  gate_dir: null,
  failure: null,
  bisect: null,
  judged_at: started_at,
});

const history = {
  experiment: 'e',
  runs: 2,
  environments: [{ env_key: 'k', env_label: 'cpu', runs: 2 }],
  metrics: [
    {
      name: 'arena samples/s',
      unit: 'samples/s',
      env_key: 'k',
      points: [
        { run_id: 'aaaa', started_at: '2026-12-07T01:05:00.000Z', value: 100, low: 95, high: 105 },
        { run_id: 'bbbb', started_at: '2026-12-08T13:05:00.000Z', value: 83, low: 80, high: 86 },
      ],
      changes: [],
    },
  ],
  chosen: [],
  gate: null,
  nights: [night('aaaa', '2026-12-07T01:05:00.000Z', 'first'), night('bbbb', '2026-12-08T13:05:00.000Z', 'flagged')],
  commits: { aaaa: 'aaaa1111222233334444', bbbb: 'bbbb5555666677778888' },
} as unknown as ExperimentHistory;

describe('the history chart', () => {
  it('marks flagged nights, shows commits on hover and draws times on a 24-hour clock', async () => {
    const chart = historyChart(history);
    const rows = (chart.spec as { vconcat: { data: { values: Record<string, unknown>[] } }[] }).vconcat[0]!.data.values;
    assert.deepEqual(
      rows.filter((r) => r['kind'] === 'point').map((r) => r['commit']),
      ['aaaa11112222', 'bbbb55556666'],
    );
    const flagged = rows.filter((r) => r['kind'] === 'flagged');
    assert.deepEqual(
      flagged.map((r) => [r['run'], r['label']]),
      [['bbbb', 'flagged 0.830x']],
    );
    const { svg } = await drawChart(chart.spec);
    assert.ok(svg);
    // 13:05 UTC is drawn as 13:05, never 01:05 PM; and no label uses a 12-hour clock.
    assert.match(svg, />12-08 1[23]:\d\d</);
    assert.doesNotMatch(svg, /\b(AM|PM)\b/);
    assert.match(svg, /flagged by the paired gate: bbbb; commit: bbbb00000000/);
  });
});
