// The ratio panel shared by the compare and before/after charts: throughput and peak-memory ratios
// with their CIs, the noise band shaded and a rule at 1.
import { round, type VlSpec } from './spec.js';
import type { Interval } from '../../domain/index.js';

/** Rows for one label: a throughput row and a peak-memory row, for the ratios that exist. */
export function ratioRows(
  field: string,
  label: string,
  throughput: Interval | null,
  verdict: string,
  memory: Interval | null,
  memoryVerdict: string,
): Record<string, unknown>[] {
  const row = (outcome: string, i: Interval, v: string) => ({
    [field]: label,
    outcome,
    ratio: round(i.estimate),
    low: round(i.low),
    high: round(i.high),
    verdict: v,
  });
  return [
    ...(throughput ? [row('throughput', throughput, verdict)] : []),
    ...(memory ? [row('peak memory', memory, memoryVerdict)] : []),
  ];
}

/** The band, the rule at 1, and the ratios (rows from ratioRows) on a nominal y axis. */
export function ratioLayers(
  rows: readonly Record<string, unknown>[],
  y: { field: string; sort?: string[] },
  xTitle: string,
  noiseBand: number,
): VlSpec[] {
  const band = [{ low: round(1 - noiseBand), high: round(1 + noiseBand), one: 1 }];
  return [
    {
      data: { values: band },
      mark: { type: 'rect', color: '#eee' },
      encoding: { x: { field: 'low', type: 'quantitative' }, x2: { field: 'high' } },
    },
    {
      data: { values: band },
      mark: { type: 'rule', color: '#888' },
      encoding: { x: { field: 'one', type: 'quantitative' } },
    },
    {
      data: { values: rows },
      encoding: {
        y: { field: y.field, type: 'nominal', ...(y.sort ? { sort: y.sort } : {}), title: null },
        yOffset: { field: 'outcome', type: 'nominal' },
        color: { field: 'outcome', type: 'nominal', legend: { orient: 'bottom', title: null } },
      },
      layer: [
        {
          mark: 'rule',
          encoding: {
            x: { field: 'low', type: 'quantitative', title: xTitle, scale: { zero: false } },
            x2: { field: 'high' },
          },
        },
        {
          mark: { type: 'point', filled: true, size: 60 },
          encoding: {
            x: { field: 'ratio', type: 'quantitative' },
            tooltip: [
              { field: y.field },
              { field: 'outcome' },
              { field: 'ratio' },
              { field: 'low' },
              { field: 'high' },
              { field: 'verdict' },
            ],
          },
        },
      ],
    },
  ];
}
