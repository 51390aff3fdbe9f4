// The end of a bisection: bisect.json, bisect.md, the ratio chart (spec, and SVG when drawn),
// report.html, then run.json as "finished" (the commit point, as for every run).
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic.js';
import { writeRunJson, type RunDir } from '../store/run-dir.js';
import { bisectChart, bisectHtml, bisectMarkdown, type BisectFile } from '../report/bisect.js';
import { drawChart } from '../report/render.js';
import { OUTCOMES, type Outcome, type RunJson, type TrialRecord } from '../domain/index.js';

export async function writeBisectFiles(a: {
  dir: RunDir;
  runJson: RunJson;
  file: BisectFile;
  records: readonly TrialRecord[];
  started: number;
  draw: boolean;
}): Promise<void> {
  const { dir, file } = a;
  writeJsonAtomic(join(dir.path, 'bisect.json'), file);
  writeFileAtomic(join(dir.path, 'bisect.md'), bisectMarkdown(file));
  const chart = bisectChart(file);
  writeJsonAtomic(join(dir.path, 'charts', `${chart.name}.vl.json`), chart.spec);
  const warnings: string[] = [...a.runJson.resumes.flatMap((r) => r.notes), ...dir.journal.incidents];
  let svg: string | null = null;
  if (a.draw) {
    try {
      svg = (await drawChart(chart.spec)).svg;
      if (svg) writeFileAtomic(join(dir.path, 'charts', `${chart.name}.svg`), svg);
    } catch (error) {
      warnings.push(`the ratio chart could not be drawn (${(error as Error).message}); its spec is in charts/`);
    }
  }
  writeFileAtomic(join(dir.path, 'report.html'), bisectHtml(file, svg));
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
        bisect: join(dir.path, 'bisect.json'),
        summary: join(dir.path, 'bisect.md'),
        report: join(dir.path, 'report.html'),
      },
    },
  });
}
