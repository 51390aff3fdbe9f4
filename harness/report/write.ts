// Writes every report of a run directory from its run.json and its journal alone: charts/*.vl.json,
// charts/*.svg, report.html and summary.md. The same inputs always give the same bytes.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic.js';
import { JOURNAL_FILE } from '../store/journal.js';
import { makeOwnDir, RUN_FILE } from '../store/run-dir.js';
import { stageCharts } from './charts/index.js';
import { reportHtml, type RenderedChart } from './html.js';
import { drawChart } from './render.js';
import { summaryMarkdown } from './summary-md.js';
import type { TrialRecord } from '../domain/index.js';
import type { RunJson } from '../experiment/run-file.js';
import type { ReportKinds } from './kinds.js';

export const REPORT_FILES = ['report.html', 'summary.md'];

/**
 * Builds and writes every report; returns the files written, relative to the run directory. With
 * `draw: false` the charts are written as Vega-Lite specs only and report.html says how to draw them
 * (`tunebench report <dir>`): vega costs about half a second per process, which `tunebench time`,
 * a command people run in loops, does not pay.
 */
export async function writeReports(
  dir: string,
  run: RunJson,
  records: readonly TrialRecord[],
  { draw = true, kinds }: { draw?: boolean; kinds: ReportKinds },
): Promise<string[]> {
  if (!run.result)
    throw new StoreError(
      `${join(dir, RUN_FILE)} has no result: the run did not finish, so there is nothing to report yet`,
    );
  const result = run.result;
  const chartsDir = join(dir, 'charts');
  makeOwnDir(chartsDir);
  const rendered: RenderedChart[] = [];
  for (const stage of result.stages) {
    for (const chart of stageCharts(stage, records, kinds)) {
      if (!draw) {
        rendered.push({ chart, svg: null, deferred: true, stage: stage.name });
        continue;
      }
      const drawn = await drawChart(chart.spec);
      rendered.push({
        chart: { ...chart, spec: drawn.spec ?? chart.spec },
        svg: drawn.svg,
        omitted: drawn.omitted,
        stage: stage.name,
      });
    }
  }
  const drawn = rendered.filter((c) => c.svg !== null || c.deferred);
  // Charts of an earlier build that no longer exist would mislead: the folder mirrors this build.
  const keep = new Set(
    drawn.flatMap((c) => [`${c.chart.name}.vl.json`, ...(c.svg !== null ? [`${c.chart.name}.svg`] : [])]),
  );
  for (const f of readdirSync(chartsDir)) if (!keep.has(f) && /\.(vl\.json|svg)$/.test(f)) rmSync(join(chartsDir, f));
  const written: string[] = [];
  for (const c of drawn) {
    writeFileAtomic(join(chartsDir, `${c.chart.name}.vl.json`), `${JSON.stringify(c.chart.spec, null, 2)}\n`);
    written.push(`charts/${c.chart.name}.vl.json`);
    if (c.svg === null) continue;
    writeFileAtomic(join(chartsDir, `${c.chart.name}.svg`), c.svg);
    written.push(`charts/${c.chart.name}.svg`);
  }
  const raw = [
    RUN_FILE,
    JOURNAL_FILE,
    'chosen-config.json',
    'chosen-config.env',
    'chosen-config.yaml',
    'summary.md',
    ...written.filter((f) => f.endsWith('.vl.json')),
  ];
  writeFileAtomic(join(dir, 'summary.md'), summaryMarkdown(result, records, kinds));
  writeFileAtomic(
    join(dir, 'report.html'),
    reportHtml({ result, records, charts: rendered, environment: run.environment, files: raw, kinds }),
  );
  return [...written, ...REPORT_FILES];
}
