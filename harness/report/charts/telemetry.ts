// The telemetry chart of one trial: CPU (cores busy) and GPU utilisation, and RSS and GPU memory,
// over the trial's time.
import { base, MIB, round, slug, type Chart } from './spec.js';
import { roleText, type TrialRecord } from '../../domain/index.js';

export function telemetryChart(stage: string, t: TrialRecord): Chart | null {
  const s = t.telemetry?.series;
  if (!s || s.t.length === 0) return null;
  const rows: { t: number; panel: string; series: string; value: number | null }[] = [];
  s.t.forEach((time, i) => {
    rows.push({
      t: time,
      panel: 'utilisation',
      series: 'CPU of the process tree (% of one core)',
      value: round((s.cpu_cores[i] ?? 0) * 100),
    });
    rows.push({
      t: time,
      panel: 'memory (MiB)',
      series: 'RSS of the process tree',
      value: round((s.rss_bytes[i] ?? 0) / MIB),
    });
  });
  for (const g of s.gpus) {
    g.t.forEach((time, i) => {
      rows.push({
        t: round(time)!,
        panel: 'utilisation',
        series: `GPU ${g.index} %`,
        value: g.utilization_pct[i] ?? null,
      });
      const used = g.memory_used_bytes[i];
      rows.push({
        t: round(time)!,
        panel: 'memory (MiB)',
        series: `GPU ${g.index} memory`,
        value: used === null || used === undefined ? null : round(used / MIB),
      });
    });
  }
  const config = Object.entries(t.config)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  return {
    name: `telemetry-${slug(stage)}`,
    title: `${stage}: telemetry of trial ${t.index}`,
    spec: {
      ...base(
        `${stage}: telemetry of trial ${t.index} (${roleText(t.role)})`,
        `CPU, memory and GPU over the trial's time; ${config}`,
      ),
      data: { values: rows },
      facet: { row: { field: 'panel', type: 'nominal', title: null, sort: ['utilisation', 'memory (MiB)'] } },
      resolve: { scale: { y: 'independent' } },
      spec: {
        width: 520,
        height: 120,
        mark: { type: 'line', point: false },
        encoding: {
          x: { field: 't', type: 'quantitative', title: 'seconds since the trial started' },
          y: { field: 'value', type: 'quantitative', title: null },
          color: { field: 'series', type: 'nominal', legend: { orient: 'bottom', title: null, labelLimit: 320 } },
        },
      },
    },
  };
}
