// What `tunebench history` writes and how it keeps the reports folder its own: each experiment's
// history.html, history.md, history.json and trend chart, and the lock that lets one history at a time
// confirm alarms (confirmations run trials and record what they found).
import { join } from 'node:path';
import { renderSvg } from '../report/render.js';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic.js';
import { acquireLock } from '../store/lock.js';
import { experimentDirName, makeOwnDir } from '../store/run-dir.js';
import { printedCommand } from '../util/shell.js';
import type { BisectHint } from './bisect-hint.js';
import { historyChart } from './chart.js';
import { HISTORY_LOCK_FILE } from './index.js';
import { bisectLine, historyHtml, historyMarkdown } from './render.js';
import { failingMetrics, seriesDecides, type ExperimentHistory } from './trend.js';

/**
 * Runs `fn` holding the reports folder's history lock where confirmations may run trials (`confirm`);
 * a second history that would confirm at the same time is refused with the fix.
 */
export async function withHistoryLock<T>(
  reports: string,
  confirm: boolean,
  commandLine: string,
  fn: () => Promise<T>,
): Promise<T> {
  const lock = confirm
    ? acquireLock(reports, commandLine, { file: HISTORY_LOCK_FILE, then: 'run tunebench history again' })
    : null;
  try {
    return await fn();
  } finally {
    lock?.release();
  }
}

/**
 * Writes each experiment's history under `outRoot`/<experiment>/: the trend chart (spec and SVG),
 * history.html, history.md and history.json. Returns the HTML files written and the Markdown texts.
 */
export async function writeHistories(
  outRoot: string,
  histories: readonly ExperimentHistory[],
  threshold: number | null,
  hints: ReadonlyMap<ExperimentHistory, BisectHint | null>,
): Promise<{ written: string[]; markdown: string[] }> {
  const written: string[] = [];
  const markdown: string[] = [];
  for (const h of histories) {
    const dir = join(outRoot, experimentDirName(h.experiment));
    makeOwnDir(join(dir, 'charts'));
    const chart = historyChart(h);
    const svg = await renderSvg(chart.spec);
    writeFileAtomic(join(dir, 'charts', `${chart.name}.vl.json`), `${JSON.stringify(chart.spec, null, 2)}\n`);
    writeFileAtomic(join(dir, 'charts', `${chart.name}.svg`), svg);
    writeFileAtomic(join(dir, 'history.html'), historyHtml(h, { chart, svg }, threshold));
    const text = historyMarkdown(h, threshold);
    writeFileAtomic(join(dir, 'history.md'), text);
    writeJsonAtomic(join(dir, 'history.json'), historyJson(h, threshold, hints.get(h) ?? null));
    markdown.push(text);
    written.push(join(dir, 'history.html'));
  }
  return { written, markdown };
}

/**
 * The findings for machines: no trial data, just the series, change points, the gate and, when the
 * gate fails on a regression, the bisection it calls for (`bisect.args` are tunebench's arguments).
 */
export function historyJson(h: ExperimentHistory, threshold: number | null, hint: BisectHint | null): unknown {
  const g = h.gate;
  return {
    experiment: h.experiment,
    runs: h.runs,
    environments: h.environments,
    threshold_pct: threshold,
    change_points: h.metrics.flatMap((m) => m.changes.map((c) => ({ metric: m.name, env_key: m.env_key, ...c }))),
    metrics: h.metrics.map((m) => ({ name: m.name, unit: m.unit, env_key: m.env_key, points: m.points })),
    chosen: h.chosen,
    gate: g && {
      latest: g.latest,
      baseline: g.baseline,
      env_mismatch: g.env_mismatch,
      regressions: g.regressions.map((r) => ({
        metric: r.metric,
        throughput_ratio: r.throughput_ratio,
        verdict: r.verdict,
      })),
      config_changes: g.config_changes,
      config_ties: g.config_ties,
      decided_by: seriesDecides(g) ? 'series' : 'baseline',
      failing: failingMetrics(g),
      series: g.series,
      metrics:
        g.comparison?.metrics.map((m) => ({
          metric: m.metric,
          throughput_ratio: m.throughput_ratio,
          verdict: m.verdict,
        })) ?? [],
      notes: g.notes,
    },
    bisect: hint && {
      ...hint,
      ...(hint.available ? { command: printedCommand(['tunebench', ...hint.args]) } : {}),
      message: bisectLine(h.experiment, hint),
    },
  };
}
