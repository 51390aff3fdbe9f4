// The before/after chart: each shared metric's ratio after/before with its CI, for throughput and for
// peak memory, with the noise band and a rule at 1.
import type { BeforeAfter } from '../before-after.js';
import { base, round, type Chart } from './spec.js';

export function beforeAfterChart(cmp: BeforeAfter): Chart {
  const rows = cmp.metrics.flatMap((m) => [
    ...(m.throughput_ratio ? [{ metric: m.metric, outcome: 'throughput', ratio: round(m.throughput_ratio.estimate), low: round(m.throughput_ratio.low), high: round(m.throughput_ratio.high), verdict: m.verdict }] : []),
    ...(m.memory_ratio ? [{ metric: m.metric, outcome: 'peak memory', ratio: round(m.memory_ratio.estimate), low: round(m.memory_ratio.low), high: round(m.memory_ratio.high), verdict: m.memory_verdict }] : []),
  ]);
  const band = [{ low: round(1 - cmp.noise_band), high: round(1 + cmp.noise_band), one: 1 }];
  return {
    name: 'before-after',
    title: 'after / before, per shared metric',
    spec: {
      ...base(`after / before: ${cmp.after.run_id} vs ${cmp.before.run_id}`, `Ratios with 95% bootstrap CIs; grey band: +/-${(cmp.noise_band * 100).toFixed(1)}% noise band.`),
      width: 420,
      height: { step: 26 },
      layer: [
        { data: { values: band }, mark: { type: 'rect', color: '#eee' }, encoding: { x: { field: 'low', type: 'quantitative' }, x2: { field: 'high' } } },
        { data: { values: band }, mark: { type: 'rule', color: '#888' }, encoding: { x: { field: 'one', type: 'quantitative' } } },
        {
          data: { values: rows },
          encoding: {
            y: { field: 'metric', type: 'nominal', title: null },
            yOffset: { field: 'outcome', type: 'nominal' },
            color: { field: 'outcome', type: 'nominal', legend: { orient: 'bottom', title: null } },
          },
          layer: [
            { mark: 'rule', encoding: { x: { field: 'low', type: 'quantitative', title: 'after / before', scale: { zero: false } }, x2: { field: 'high' } } },
            { mark: { type: 'point', filled: true, size: 60 }, encoding: { x: { field: 'ratio', type: 'quantitative' }, tooltip: [{ field: 'metric' }, { field: 'outcome' }, { field: 'ratio' }, { field: 'low' }, { field: 'high' }, { field: 'verdict' }] } },
          ],
        },
      ],
    },
  };
}
