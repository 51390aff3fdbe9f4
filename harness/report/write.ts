// Writes every report of a run directory from its run.json and its journal alone: charts/*.vl.json,
// charts/*.svg, report.html and summary.md. The same inputs always give the same bytes.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from '../engine/result.js';
import { StoreError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic.js';
import { JOURNAL_FILE, readJournal, requireJournalFormat } from '../store/journal.js';
import { makeOwnDir, readRunJson, RUN_FILE } from '../store/run-dir.js';
import type { TrialRecord } from '../trial/record.js';
import { stageCharts } from './charts/index.js';
import { reportHtml, type RenderedChart } from './html.js';
import { renderSvg } from './render.js';
import { summaryMarkdown } from './summary-md.js';

export const REPORT_FILES = ['report.html', 'summary.md'];

export interface RunJson {
  experiment: string;
  run_id: string;
  environment: unknown;
  result?: RunResult;
}

/** Builds and writes every report; returns the files written, relative to the run directory. */
export async function writeReports(dir: string, run: RunJson, records: readonly TrialRecord[]): Promise<string[]> {
  if (!run.result) throw new StoreError(`${join(dir, RUN_FILE)} has no result: the run did not finish, so there is nothing to report yet`);
  const result = run.result;
  const chartsDir = join(dir, 'charts');
  makeOwnDir(chartsDir);
  const rendered: RenderedChart[] = [];
  for (const stage of result.stages) {
    for (const chart of stageCharts(stage, records)) rendered.push({ chart, svg: await renderSvg(chart.spec), stage: stage.name });
  }
  // Charts of an earlier build that no longer exist would mislead: the folder mirrors this build.
  const keep = new Set(rendered.flatMap((c) => [`${c.chart.name}.vl.json`, `${c.chart.name}.svg`]));
  for (const f of readdirSync(chartsDir)) if (!keep.has(f) && /\.(vl\.json|svg)$/.test(f)) rmSync(join(chartsDir, f));
  const written: string[] = [];
  for (const c of rendered) {
    writeFileAtomic(join(chartsDir, `${c.chart.name}.vl.json`), `${JSON.stringify(c.chart.spec, null, 2)}\n`);
    writeFileAtomic(join(chartsDir, `${c.chart.name}.svg`), c.svg);
    written.push(`charts/${c.chart.name}.vl.json`, `charts/${c.chart.name}.svg`);
  }
  const raw = [RUN_FILE, JOURNAL_FILE, 'chosen-config.json', 'chosen-config.env', 'chosen-config.yaml', 'summary.md', ...written.filter((f) => f.endsWith('.vl.json'))];
  writeFileAtomic(join(dir, 'summary.md'), summaryMarkdown(result, records));
  writeFileAtomic(join(dir, 'report.html'), reportHtml({ result, records, charts: rendered, environment: run.environment, files: raw }));
  return [...written, ...REPORT_FILES];
}

/** Reads a run directory for `tunebench report`, with a clear error for each way it can be unusable. */
export function readRunDir(dir: string): { run: RunJson; records: TrialRecord[]; warnings: string[] } {
  const run = readRunJson<RunJson>(dir, `the trials in ${JOURNAL_FILE} are kept apart and may be intact`);
  const journal = readJournal(join(dir, JOURNAL_FILE));
  requireJournalFormat(journal, join(dir, JOURNAL_FILE), '', 'use the tunebench version that wrote the run');
  const warnings: string[] = [];
  if (journal.truncatedTail) warnings.push(`the last line of ${JOURNAL_FILE} was cut short (the harness was killed while writing it) and is ignored`);
  if (journal.badLines.length > 0) warnings.push(`${JOURNAL_FILE}: lines ${journal.badLines.join(', ')} are not valid JSON and are ignored`);
  // Trials are journaled in order from 0: anything else means records were removed or the file was swapped.
  const broken = journal.records.findIndex((r, i) => r.index !== i);
  if (broken >= 0) warnings.push(`${JOURNAL_FILE}: the trial indices ${broken === 0 ? `start at ${journal.records[0]!.index}, not 0` : `jump from ${journal.records[broken - 1]!.index} to ${journal.records[broken]!.index} at line ${broken + 1}`}: trials are missing, so this report does not show the whole run`);
  return { run, records: journal.records, warnings };
}
