// The max-batch chart's memory panel plots what the limit limits (issue 44): under a cgroup cap the
// cgroup's peak of the tree (a tree's RSS counts shared pages once per process and passed the cap for
// runs that never hit it), on a card its device memory against the card, and RSS only without a limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxBatchChart } from '../../../harness/report/charts/max-batch.js';
import type { MaxBatchSummary, TrialRecord } from '../../../harness/domain/index.js';

const MIB = 2 ** 20;
const GIB = 2 ** 30;

function trial(
  index: number,
  batch: number,
  outcome: 'ok' | 'oom',
  rss: number,
  capped: number,
  device: number | null,
) {
  return {
    index,
    config: { batch_size: batch },
    role: 'probe',
    outcome,
    samples_per_second: outcome === 'ok' ? 100 : null,
    peak_rss_bytes: rss,
    peak_limited_bytes: capped,
    peak_device_bytes: device,
  } as unknown as TrialRecord;
}

const records = [
  trial(0, 64, 'ok', 1.2 * GIB, 1.0 * GIB, 3 * GIB),
  // Passed under a 2 GiB cgroup cap while its tree's RSS (workers' shared pages counted twice) read 2.3 GiB.
  trial(1, 96, 'ok', 2.3 * GIB, 1.8 * GIB, 5 * GIB),
  trial(2, 128, 'oom', 2.6 * GIB, 2 * GIB, null),
];

function panel(r: Partial<MaxBatchSummary>) {
  const summary = { param: 'batch_size', max: 96, recommended: 64, fastest: 96, ...r } as MaxBatchSummary;
  const spec = maxBatchChart('mb', summary, records).spec as {
    vconcat: { layer: { data?: { values: unknown[] } }[] }[];
  };
  const layers = spec.vconcat[1]!.layer;
  const points = layers[0]!.data!.values as { measure: string; mib: number; outcome: string; rss_mib: number }[];
  const rules = layers.map((l) => l.data?.values?.[0] as { cap_mib?: number; label: string } | undefined);
  const rule = (rules.find((v) => v?.cap_mib !== undefined) as { cap_mib: number; label: string } | undefined) ?? null;
  return { points, rule };
}

describe('the memory panel of the max-batch chart', () => {
  it('under a cgroup cap plots the cgroup peak only, every passing run under the cap line', () => {
    const { points, rule } = panel({ cap_bytes: 2 * GIB, cap_mechanism: 'cgroup-v1' });
    assert.deepEqual(
      new Set(points.map((p) => p.measure)),
      new Set(["peak of the trial's cgroup (what the cap limits)"]),
    );
    assert.equal(points.length, 3);
    assert.equal(rule!.cap_mib, 2048);
    for (const p of points.filter((q) => q.outcome === 'ok')) assert.ok(p.mib <= rule!.cap_mib, JSON.stringify(p));
    // RSS stays in the tooltip.
    assert.ok(Math.abs(points[1]!.rss_mib - (2.3 * GIB) / MIB) < 1);
  });

  it('on a card plots device memory against the card', () => {
    const { points, rule } = panel({ cap_bytes: null, card_bytes: 140 * GIB });
    assert.deepEqual(
      points.map((p) => [p.measure, p.mib]),
      [
        ['peak device memory (what the card limits)', 3072],
        ['peak device memory (what the card limits)', 5120],
      ],
    );
    assert.match(rule!.label, /^card 143\d{3} MiB$/);
  });

  it('without a limit plots peak RSS', () => {
    const { points, rule } = panel({ cap_bytes: null, cap_mechanism: 'none' });
    assert.equal(rule, null);
    assert.ok(points.some((p) => p.measure === 'peak RSS' && Math.abs(p.mib - (2.3 * GIB) / MIB) < 1));
  });
});
