// The claim chart: the claimed band of the speedup as a shaded range, the measured speedup with its
// CI, and a rule at 1 (no change).
import { base, round, slug, type Chart } from './spec.js';
import type { ClaimSummary } from '../../domain/index.js';

export function claimChart(stage: string, r: ClaimSummary): Chart | null {
  if (!r.speedup) return null;
  const top = Math.max(r.band.high ?? r.band.low * 1.5, r.speedup.high, 1) * 1.1;
  const band = [{ low: round(r.band.low), high: round(r.band.high ?? top), label: `claimed ${r.claim}` }];
  const measured = [
    {
      label: 'measured',
      estimate: round(r.speedup.estimate),
      low: round(r.speedup.low),
      high: round(r.speedup.high),
      verdict: r.verdict,
    },
  ];
  const x = { type: 'quantitative', title: 'speedup (candidate over baseline)', scale: { domain: [0, round(top)] } };
  return {
    name: `claim-${slug(stage)}`,
    title: `${stage}: claim "${r.claim}" (${r.verdict})`,
    spec: {
      ...base(`${stage}: "${r.claim}" is ${r.verdict}`, r.sentence),
      width: 480,
      height: 60,
      layer: [
        {
          data: { values: band },
          mark: { type: 'rect', color: '#cfe3f5' },
          encoding: { x: { field: 'low', ...x }, x2: { field: 'high' } },
        },
        {
          data: { values: [{ one: 1 }] },
          mark: { type: 'rule', color: '#888' },
          encoding: { x: { field: 'one', type: 'quantitative' } },
        },
        {
          data: { values: measured },
          mark: { type: 'rule', strokeWidth: 2 },
          encoding: { x: { field: 'low', type: 'quantitative' }, x2: { field: 'high' }, y: { value: 30 } },
        },
        {
          data: { values: measured },
          mark: { type: 'point', filled: true, size: 80 },
          encoding: {
            x: { field: 'estimate', type: 'quantitative' },
            y: { value: 30 },
            tooltip: [{ field: 'estimate' }, { field: 'low' }, { field: 'high' }, { field: 'verdict' }],
          },
        },
      ],
    },
  };
}
