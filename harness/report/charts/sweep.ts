// Sweep charts: a heatmap of throughput over two parameters (faceted by a third and the rest), a
// ranked dot plot with CI bars, and the stall fraction of each config.
import { configLabels } from './config-labels.js';
import { base, round, slug, type Chart, type VlSpec } from './spec.js';
import type { SweepSummary } from '../../domain/index.js';

type ConfigRow = ReturnType<typeof configRows>[number];
/** The spec head of the ranked and stall charts: a title with the label legend as its subtitle. */
type Titled = (title: string, description: string) => VlSpec;

export function sweepCharts(stage: string, r: SweepSummary): Chart[] {
  // The ranked and stall charts name each config by the parameters that vary, in full (no label limit).
  const names = configLabels(
    r.params,
    r.configs.map((c) => c.config),
  );
  const titled = titledBy(names.legend);
  const measured = configRows(r, names.labels).filter((x) => x.samples_per_second !== null);
  const stalled = measured.filter((x) => x.stall !== null);
  const charts: Chart[] = [];
  const heatmap = heatmapChart(stage, r, measured);
  if (heatmap) charts.push(heatmap);
  if (measured.length > 0) charts.push(rankedChart(stage, measured, titled));
  if (stalled.length > 0) charts.push(stallChart(stage, stalled, titled));
  return charts;
}

function titledBy(abbreviations: readonly [string, string][]): Titled {
  const legend = abbreviations.length > 0 ? abbreviations.map(([a, p]) => `${a} = ${p}`).join(', ') : null;
  return (title, description) => {
    const spec = base(title, description);
    return legend ? { ...spec, title: { ...(spec['title'] as object), subtitle: legend } } : spec;
  };
}

/** One data row per config, in the summary's order; `labels` are the configs' axis labels. */
function configRows(r: SweepSummary, labels: readonly string[]) {
  return r.configs.map((c, i) => ({
    config: c.key || '(no parameter applies)',
    label: labels[i]!,
    ...Object.fromEntries(r.params.map((p) => [p, c.config[p] === undefined ? 'n/a' : String(c.config[p])])),
    status: statusOf(r, c),
    samples_per_second: round(c.throughput?.estimate),
    low: round(c.throughput?.low),
    high: round(c.throughput?.high),
    stall: round(c.stall_fraction),
    trials: c.trials.length,
  }));
}

function statusOf(r: SweepSummary, c: SweepSummary['configs'][number]): string {
  if (c.key === r.chosen_key) return 'chosen';
  // A config that failed a trial (an OOM at the chosen batch) is never called a tie.
  if (r.tied.includes(c.key) && c.status !== 'failed') return 'tied with the best';
  return c.status;
}

/** Throughput over the first two parameters, faceted by the rest; none without a parameter. */
function heatmapChart(stage: string, r: SweepSummary, measured: readonly ConfigRow[]): Chart | null {
  const [px, py, ...rest] = r.params;
  if (!px || measured.length === 0) return null;
  const facetField = rest.length > 0 ? 'facet' : undefined;
  const values = measured.map(({ label: _label, ...x }) => ({
    ...x,
    ...(facetField ? { facet: rest.map((p) => `${p}=${(x as Record<string, unknown>)[p]}`).join(' ') } : {}),
  }));
  const unit = heatmapUnit(values, px, py);
  return {
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
  };
}

/** One heatmap panel: a cell per (px, py) coloured by samples/s, with the value written in it. */
function heatmapUnit(values: readonly object[], px: string, py: string | undefined) {
  const distinct = (p: string) => new Set(values.map((v) => (v as Record<string, unknown>)[p])).size;
  return {
    width: 46 * Math.max(1, distinct(px)),
    height: 30 * Math.max(1, py ? distinct(py) : 1),
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
}

/** The y axis of the ranked and stall charts: one config label per row, fastest first. */
function configAxis() {
  return {
    field: 'label',
    type: 'nominal',
    sort: { field: 'samples_per_second', order: 'descending' },
    title: null,
    axis: { labelLimit: 0 },
  };
}

function rankedChart(stage: string, measured: readonly ConfigRow[], titled: Titled): Chart {
  return {
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
      encoding: { y: configAxis() },
      layer: [ciLayer(), estimateLayer()],
    },
  };
}

/** The CI of each config as a rule from low to high. */
function ciLayer() {
  return {
    mark: { type: 'rule' },
    encoding: {
      x: { field: 'low', type: 'quantitative', title: 'samples/s', scale: { zero: false } },
      x2: { field: 'high' },
    },
  };
}

/** The estimate of each config as a dot coloured by its status. */
function estimateLayer() {
  return {
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
  };
}

function stallChart(stage: string, stalled: readonly ConfigRow[], titled: Titled): Chart {
  return {
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
        y: configAxis(),
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
  };
}
