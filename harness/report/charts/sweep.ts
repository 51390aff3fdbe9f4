// Sweep charts: a heatmap of throughput over two parameters (faceted by a third and the rest), a
// ranked dot plot with CI bars, and the stall fraction of each config.
import { configLabels } from './config-labels.js';
import { base, round, slug, type Chart, type VlSpec } from './spec.js';
import type { SweepSummary } from '../../domain/index.js';

export function sweepCharts(stage: string, r: SweepSummary): Chart[] {
  // The ranked and stall charts name each config by the parameters that vary, in full (no label limit).
  const names = configLabels(
    r.params,
    r.configs.map((c) => c.config),
  );
  const legend = names.legend.length > 0 ? names.legend.map(([a, p]) => `${a} = ${p}`).join(', ') : null;
  const titled = (title: string, description: string): VlSpec => {
    const spec = base(title, description);
    return legend ? { ...spec, title: { ...(spec['title'] as object), subtitle: legend } } : spec;
  };
  const rows = r.configs.map((c, i) => ({
    config: c.key || '(no parameter applies)',
    label: names.labels[i]!,
    ...Object.fromEntries(r.params.map((p) => [p, c.config[p] === undefined ? 'n/a' : String(c.config[p])])),
    // A config that failed a trial (an OOM at the chosen batch) is never called a tie.
    status:
      c.key === r.chosen_key
        ? 'chosen'
        : r.tied.includes(c.key) && c.status !== 'failed'
          ? 'tied with the best'
          : c.status,
    samples_per_second: round(c.throughput?.estimate),
    low: round(c.throughput?.low),
    high: round(c.throughput?.high),
    stall: round(c.stall_fraction),
    trials: c.trials.length,
  }));
  const measured = rows.filter((x) => x.samples_per_second !== null);
  const charts: Chart[] = [];
  const [px, py, ...rest] = r.params;
  if (px && measured.length > 0) {
    const facetField = rest.length > 0 ? 'facet' : undefined;
    const values = measured.map(({ label: _label, ...x }) => ({
      ...x,
      ...(facetField ? { facet: rest.map((p) => `${p}=${(x as Record<string, unknown>)[p]}`).join(' ') } : {}),
    }));
    const unit = {
      width: 46 * Math.max(1, new Set(values.map((v) => (v as Record<string, unknown>)[px])).size),
      height: 30 * Math.max(1, py ? new Set(values.map((v) => (v as Record<string, unknown>)[py])).size : 1),
      layer: [
        {
          mark: 'rect',
          encoding: {
            color: {
              field: 'samples_per_second',
              type: 'quantitative',
              title: 'samples/s',
              scale: { scheme: 'viridis' },
            },
          },
        },
        {
          mark: { type: 'text', fontSize: 9 },
          encoding: {
            text: { field: 'samples_per_second', type: 'quantitative', format: '.3~s' },
            color: { value: 'white' },
          },
        },
      ],
      encoding: {
        x: { field: px, type: 'ordinal', title: px },
        ...(py ? { y: { field: py, type: 'ordinal', title: py } } : {}),
        tooltip: [
          { field: 'config' },
          { field: 'samples_per_second', title: 'samples/s' },
          { field: 'low' },
          { field: 'high' },
          { field: 'status' },
        ],
      },
    };
    charts.push({
      name: `sweep-${slug(stage)}-heatmap`,
      title: `${stage}: throughput over ${r.params.join(', ')}`,
      spec: {
        ...base(
          `${stage}: median throughput over ` +
            `${[px, py].filter(Boolean).join(' and ')}${rest.length ? `, by ${rest.join(', ')}` : ''}`,
          'Pooled samples/s of each config that finished a trial.',
        ),
        data: { values },
        ...(facetField ? { facet: { field: facetField, type: 'nominal', title: null }, columns: 4, spec: unit } : unit),
      },
    });
  }
  if (measured.length > 0) {
    charts.push({
      name: `sweep-${slug(stage)}-ranked`,
      title: `${stage}: configs ranked by throughput`,
      spec: {
        ...titled(
          `${stage}: configs ranked by samples/s (95% CI)`,
          'Each config with its bootstrap CI; ties with the best go to the cheapest.',
        ),
        data: { values: measured },
        width: 420,
        height: { step: 16 },
        encoding: {
          y: {
            field: 'label',
            type: 'nominal',
            sort: { field: 'samples_per_second', order: 'descending' },
            title: null,
            axis: { labelLimit: 0 },
          },
        },
        layer: [
          {
            mark: { type: 'rule' },
            encoding: {
              x: { field: 'low', type: 'quantitative', title: 'samples/s', scale: { zero: false } },
              x2: { field: 'high' },
            },
          },
          {
            mark: { type: 'point', filled: true, size: 60 },
            encoding: {
              x: { field: 'samples_per_second', type: 'quantitative' },
              color: { field: 'status', type: 'nominal', legend: { orient: 'bottom', title: null } },
              tooltip: [
                { field: 'config' },
                { field: 'samples_per_second', title: 'samples/s' },
                { field: 'low' },
                { field: 'high' },
                { field: 'trials' },
                { field: 'status' },
              ],
            },
          },
        ],
      },
    });
  }
  const stalled = measured.filter((x) => x.stall !== null);
  if (stalled.length > 0) {
    charts.push({
      name: `sweep-${slug(stage)}-stall`,
      title: `${stage}: stall fraction per config`,
      spec: {
        ...titled(
          `${stage}: share of step time waiting for data`,
          'Stall fraction: data-wait time over step time, per config.',
        ),
        data: { values: stalled },
        width: 420,
        height: { step: 16 },
        mark: 'bar',
        encoding: {
          y: {
            field: 'label',
            type: 'nominal',
            sort: { field: 'samples_per_second', order: 'descending' },
            title: null,
            axis: { labelLimit: 0 },
          },
          x: {
            field: 'stall',
            type: 'quantitative',
            title: 'stall fraction',
            axis: { format: '.0%' },
            scale: { domain: [0, 1] },
          },
          color: { field: 'status', type: 'nominal', legend: { orient: 'bottom', title: null } },
          tooltip: [{ field: 'config' }, { field: 'stall', format: '.1%' }],
        },
      },
    });
  }
  return charts;
}
