// `tunebench compare <before-run> <after-run>`: a before/after report with ratios, CIs and verdicts.
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { EXIT } from '../errors.js';
import { compareRuns, regressions } from '../analysis/compare-runs.js';
import { beforeAfterHtml, beforeAfterMarkdown } from '../report/before-after-render.js';
import { beforeAfterChart } from '../report/charts/before-after.js';
import { renderSvg } from '../report/render.js';
import { writeFileAtomic } from '../store/atomic.js';
import { experimentDirName, makeOwnDir } from '../store/run-dir.js';
import {
  appendStepSummary,
  examples,
  parseNoiseBand,
  parseRegressionPct,
  printablePath,
  requireOutDir,
} from './common.js';
import { terminalLines } from './progress.js';
import { readRunDir } from '../experiment/run-file.js';

interface CompareOptions {
  out?: string;
  failOnRegression?: string;
  noiseBand: string;
  json?: boolean;
}

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description(
      'before/after report of two runs: ratio after/before with a bootstrap CI and a verdict for each shared metric, ' +
        'the chosen configs side by side',
    )
    .argument('<before-run>', 'run directory of the baseline')
    .argument('<after-run>', 'run directory to compare with it')
    .option(
      '--out <dir>',
      'where compare.html, compare.md and charts/ go (default reports/compare/<before-id>__<after-id>)',
    )
    .option(
      '--fail-on-regression <pct>',
      `exit ${EXIT.regression} when a metric is significantly slower by more than pct percent`,
    )
    .option('--noise-band <fraction>', 'a ratio CI must lie outside 1 +/- this to count as a change', '0.02')
    .option('--json', 'print the comparison as JSON on stdout')
    .addHelpText(
      'after',
      examples(
        'tunebench compare reports/default/<before-id> reports/default/<after-id>',
        'tunebench compare reports/default/<before-id> reports/default/<after-id> --fail-on-regression 5 --json',
      ),
    )
    .action(async (beforeDir: string, afterDir: string, o: CompareOptions) => {
      const threshold = parseRegressionPct(o.failOnRegression);
      const band = parseNoiseBand(o.noiseBand);
      const before = readRunDir(resolve(beforeDir));
      const after = readRunDir(resolve(afterDir));
      for (const w of [...before.warnings, ...after.warnings])
        process.stderr.write(terminalLines(`tunebench: warning: ${w}\n`));
      const cmp = compareRuns(before, after, { noiseBand: band });
      const bad = threshold === undefined ? [] : regressions(cmp, threshold);
      const note = bad.length > 0 ? `regression beyond ${threshold}%: ${bad.map((m) => m.metric).join('; ')}` : null;
      // run_id comes from a file: as a path component it is sanitised like an experiment name.
      const out = requireOutDir(
        '--out',
        resolve(
          o.out ??
            join(
              'reports',
              'compare',
              `${experimentDirName(cmp.before.run_id)}__${experimentDirName(cmp.after.run_id)}`,
            ),
        ),
      );
      makeOwnDir(join(out, 'charts'));
      const chart = cmp.metrics.length > 0 ? beforeAfterChart(cmp) : null;
      const rendered = chart ? { chart, svg: await renderSvg(chart.spec) } : null;
      if (chart && rendered) {
        writeFileAtomic(join(out, 'charts', `${chart.name}.vl.json`), `${JSON.stringify(chart.spec, null, 2)}\n`);
        writeFileAtomic(join(out, 'charts', `${chart.name}.svg`), rendered.svg);
      }
      writeFileAtomic(join(out, 'compare.html'), beforeAfterHtml(cmp, rendered, note));
      const markdown = beforeAfterMarkdown(cmp, note);
      writeFileAtomic(join(out, 'compare.md'), markdown);
      appendStepSummary(markdown);
      if (o.json)
        process.stdout.write(`${JSON.stringify({ ...cmp, regressions: bad.map((m) => m.metric), out }, null, 2)}\n`);
      else {
        for (const w of cmp.environment_warnings)
          process.stderr.write(terminalLines(`tunebench: warning: the environments differ: ${w}\n`));
        for (const w of cmp.warnings) process.stderr.write(terminalLines(`tunebench: warning: ${w}\n`));
        const counts = ['faster', 'slower', 'no significant difference']
          .map((v) => `${cmp.metrics.filter((m) => m.verdict === v).length} ${v}`)
          .join(', ');
        process.stdout.write(
          `${cmp.metrics.length} shared metrics: ${counts}\nreport: ${printablePath(join(out, 'compare.html'))}\n`,
        );
      }
      if (note) {
        process.stderr.write(`tunebench: ${note}\n`);
        process.exitCode = EXIT.regression;
      }
    });
}
