// The history trend chart: one row per key metric (value, 95% CI band, change points as dashed rules
// with their ratio), then the chosen values over time. One colour per environment fingerprint.
import { base, round, slug, type Chart, type VlSpec } from '../report/charts/spec.js';
import type { ExperimentHistory } from './trend.js';

const WIDTH = 640;
const CHANGE_COLOR = '#c0392b';

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
  return rows;
}

const x = { field: 't', type: 'temporal', title: null, axis: { labelAngle: 0 } };
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
              { field: 't', type: 'temporal', timeUnit: 'yearmonthdatehoursminutes' },
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
        'Key metrics per run with their 95% CI band; ' +
          'dashed rules mark change points (step detection weighted by CI width); then the chosen values.',
      ),
      vconcat: parts,
      resolve: { scale: { color: 'shared', x: 'shared' } },
    },
  };
}
