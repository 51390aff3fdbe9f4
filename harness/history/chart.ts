// The history trend chart: one row per key metric (value, 95% CI band, change points as dashed rules
// with their ratio), then the chosen values over time. One colour per environment fingerprint.
import { base, round, slug, type Chart, type VlSpec } from '../report/charts/spec.js';
import type { ExperimentHistory } from './trend.js';

const WIDTH = 640;
const CHANGE_COLOR = '#c0392b';
const FLAGGED_COLOR = '#8e44ad';

function metricRows(h: ExperimentHistory): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const m of h.metrics) {
    const metric = `${m.name} (${m.unit})`;
    for (const p of m.points) {
      // A value without a CI (the max batch) gets a band of zero width.
      rows.push({
        kind: 'point',
        metric,
        env: m.env_key,
        t: p.started_at,
        run: p.run_id,
        commit: h.commits[p.run_id]?.slice(0, 12) ?? '-',
        value: round(p.value),
        low: round(p.low ?? p.value),
        high: round(p.high ?? p.value),
      });
    }
    for (const c of m.changes) {
      const pct = (c.ratio - 1) * 100;
      rows.push({
        kind: 'change',
        metric,
        env: m.env_key,
        t: c.started_at,
        run: c.run_id,
        label: `${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%`,
      });
    }
  }
  // Nights the paired gate flagged, marked on every metric's row.
  for (const n of h.nights.filter((night) => night.verdict === 'flagged'))
    for (const m of h.metrics)
      rows.push({
        kind: 'flagged',
        metric: `${m.name} (${m.unit})`,
        t: n.started_at,
        run: n.run_id,
        commit: n.commit?.slice(0, 12) ?? '-',
        label: n.ratio ? `flagged ${n.ratio.estimate.toFixed(3)}x` : 'flagged',
      });
  return rows;
}

/** Time on a 24-hour clock, in UTC as run ids and run.json keep it. */
const x = {
  field: 't',
  type: 'temporal',
  title: null,
  scale: { type: 'utc' },
  axis: { labelAngle: 0, format: '%m-%d %H:%M' },
};
const env = { field: 'env', type: 'nominal', title: 'environment' };
const facetHeader = {
  title: null,
  labelAngle: 0,
  labelAlign: 'left',
  labelOrient: 'top',
  labelLimit: WIDTH,
  labelFontWeight: 'bold',
};

function metricsFacet(h: ExperimentHistory): VlSpec {
  const isPoint = "datum.kind === 'point'";
  return {
    data: { values: metricRows(h) },
    facet: { row: { field: 'metric', type: 'nominal', header: facetHeader } },
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: WIDTH,
      height: 90,
      layer: [
        {
          transform: [{ filter: isPoint }],
          mark: { type: 'area', opacity: 0.2 },
          encoding: {
            x,
            y: { field: 'low', type: 'quantitative', scale: { zero: false }, title: null },
            y2: { field: 'high' },
            color: env,
          },
        },
        {
          transform: [{ filter: isPoint }],
          mark: { type: 'line', point: { size: 18 }, strokeWidth: 1.2 },
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative', scale: { zero: false }, title: null },
            color: env,
            tooltip: [
              { field: 'run' },
              { field: 'commit' },
              { field: 't', type: 'temporal', timeUnit: 'utcyearmonthdatehoursminutes', format: '%Y-%m-%d %H:%M UTC' },
              { field: 'value' },
              { field: 'low' },
              { field: 'high' },
            ],
          },
        },
        {
          transform: [{ filter: "datum.kind === 'change'" }],
          mark: { type: 'rule', strokeDash: [4, 3], color: CHANGE_COLOR },
          encoding: {
            x,
            tooltip: [
              { field: 'run', title: 'change point at' },
              { field: 'label', title: 'level change' },
            ],
          },
        },
        {
          transform: [{ filter: "datum.kind === 'change'" }],
          mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, dy: 2, fontSize: 10, color: CHANGE_COLOR },
          encoding: { x, y: { value: 0 }, text: { field: 'label' } },
        },
        {
          transform: [{ filter: "datum.kind === 'flagged'" }],
          mark: { type: 'point', shape: 'triangle-down', filled: true, size: 60, color: FLAGGED_COLOR },
          encoding: {
            x,
            y: { value: 4 },
            tooltip: [
              { field: 'run', title: 'flagged by the paired gate' },
              { field: 'commit' },
              { field: 'label', title: 'tonight/reference' },
            ],
          },
        },
      ],
    },
  };
}

function chosenFacet(h: ExperimentHistory, numeric: boolean): VlSpec | null {
  const rows = h.chosen
    .filter((c) => c.points.every((p) => (typeof p.value === 'number') === numeric))
    .flatMap((c) =>
      c.points.map((p) => ({
        param: `chosen ${c.param}`,
        env: c.env_key,
        t: p.started_at,
        run: p.run_id,
        value: numeric ? p.value : String(p.value),
      })),
    );
  if (rows.length === 0) return null;
  const y = numeric
    ? { field: 'value', type: 'quantitative', scale: { zero: false }, title: null }
    : { field: 'value', type: 'nominal', title: null };
  return {
    data: { values: rows },
    facet: { row: { field: 'param', type: 'nominal', header: facetHeader } },
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: WIDTH,
      height: numeric ? 60 : 40,
      mark: numeric
        ? { type: 'line', interpolate: 'step-after', point: { size: 18 } }
        : { type: 'point', filled: true, size: 24 },
      encoding: { x, y, color: env, tooltip: [{ field: 'run' }, { field: 'value' }] },
    },
  };
}

export function historyChart(h: ExperimentHistory): Chart {
  const title = `History of ${h.experiment}: ${h.runs} runs`;
  const parts = [metricsFacet(h), chosenFacet(h, true), chosenFacet(h, false)].filter((p): p is VlSpec => p !== null);
  return {
    name: `history-${slug(h.experiment)}`,
    title,
    spec: {
      ...base(
        title,
        'Key metrics per run (UTC, 24-hour clock; the commit on hover) with their 95% CI band; dashed rules ' +
          'mark change points (step detection weighted by CI width), triangles the nights the paired gate ' +
          'flagged; then the chosen values.',
      ),
      vconcat: parts,
      resolve: { scale: { color: 'shared', x: 'shared' } },
    },
  };
}
