// The end of a bisection: bisect.json, bisect.md, the ratio chart (spec, and SVG when drawn),
// report.html, then run.json as "finished" (the commit point, as for every run).
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic.js';
import { type RunDir } from '../store/run-dir.js';
import { bisectChart, bisectFileSchema, bisectHtml, bisectMarkdown, type BisectFile } from '../report/bisect.js';
import { readCheckedJson } from '../util/checked-json.js';
import { drawChart } from '../report/render.js';
import { OUTCOMES, type Outcome, type RunWarning, type TrialRecord } from '../domain/index.js';
import { writeRunJson, type RunJson } from '../experiment/run-file.js';

/** The file a finished bisection writes its result to, in its run directory. */
export const BISECT_FILE = 'bisect.json';

/** A finished bisection's bisect.json, checked field by field. */
export function readBisectFile(runDir: string): BisectFile {
  return readCheckedJson(
    bisectFileSchema,
    join(runDir, BISECT_FILE),
    "bisect.json of a bisection's run directory",
    'it is written when a bisection finishes: continue an unfinished one with tunebench bisect --resume <run-dir>, ' +
      'or run a damaged one again',
  );
}

/**
 * bisect.md, the ratio chart (its spec, and the SVG when drawn) and report.html in `target`, from
 * bisect.json's content; `tunebench report` draws them again. Returns what could not be drawn.
 */
export async function writeBisectReport(target: string, file: BisectFile, draw: boolean): Promise<string[]> {
  const warnings: string[] = [];
  writeFileAtomic(join(target, 'bisect.md'), bisectMarkdown(file));
  const chart = bisectChart(file);
  writeJsonAtomic(join(target, 'charts', `${chart.name}.vl.json`), chart.spec);
  let svg: string | null = null;
  if (draw) {
    try {
      svg = (await drawChart(chart.spec)).svg;
      if (svg) writeFileAtomic(join(target, 'charts', `${chart.name}.svg`), svg);
    } catch (error) {
      warnings.push(`the ratio chart could not be drawn (${(error as Error).message}); its spec is in charts/`);
    }
  }
  writeFileAtomic(join(target, 'report.html'), bisectHtml(file, svg));
  return warnings;
}

export async function writeBisectFiles(a: {
  dir: RunDir;
  runJson: RunJson;
  file: BisectFile;
  records: readonly TrialRecord[];
  started: number;
  draw: boolean;
}): Promise<void> {
  const { dir, file } = a;
  writeJsonAtomic(join(dir.path, BISECT_FILE), file);
  const warnings: RunWarning[] = [
    ...a.runJson.resumes.flatMap((r) =>
      r.notes.map((text) => ({ kind: 'note' as const, source: 'resume' as const, text })),
    ),
    ...dir.journal.incidents.map((text) => ({ kind: 'note' as const, source: 'journal' as const, text })),
    ...(await writeBisectReport(dir.path, file, a.draw)).map((text) => ({
      kind: 'note' as const,
      source: 'report' as const,
      text,
    })),
  ];
  const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const r of a.records) byOutcome[r.outcome] += 1;
  const env = a.runJson.environment;
  writeRunJson(dir, {
    ...a.runJson,
    status: 'finished',
    finished_at: new Date().toISOString(),
    result: {
      experiment: a.runJson.experiment,
      run_id: a.runJson.run_id,
      run_dir: dir.path,
      environment: `${env.host} (${env.cpu.model}, ${env.cpu.cores} cores)`,
      chosen: {},
      evidence: {},
      stages: [],
      trials: {
        total: a.records.length,
        by_outcome: byOutcome,
        replayed: a.runJson.resumes.at(-1)?.replayed_trials ?? 0,
      },
      wall_seconds: (Date.now() - a.started) / 1000,
      warnings,
      failed_stages: [],
      files: {
        run: join(dir.path, 'run.json'),
        journal: dir.journal.path,
        bisect: join(dir.path, BISECT_FILE),
        summary: join(dir.path, 'bisect.md'),
        report: join(dir.path, 'report.html'),
      },
    },
  });
}
