// `tunebench history <reports-dir>`: trend charts, change points and the latest run's gate against its
// baseline, per experiment (`tunebench baseline`, in baseline.ts, pins the baseline).
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { ConfigError, EXIT } from '../errors.js';
import { indexRuns, type HistoryIndex } from '../history/index.js';
import { historyJson, withHistoryLock, writeHistories } from '../history/write.js';
import { bisectLine, findings } from '../history/render.js';
import { bisectHint } from '../history/bisect-hint.js';
import { analyzeConfirmed, type ConfirmWiring } from '../history/pending.js';
import { NIGHTLY_DEFAULTS } from '../stats/nightly.js';
import { createProgress } from './progress.js';
import { failingMetrics, type HistoryOptions } from '../history/trend.js';
import { withStopSignals } from './signals.js';
import { terminalLines } from './progress.js';
import { registerBaseline } from './baseline.js';
import { printedCommand } from '../util/shell.js';
import {
  appendStepSummary,
  examples,
  parseNoiseBand,
  parseRegressionPct,
  printablePath,
  requireOutDir,
} from './common.js';

interface HistoryFlags {
  experiment?: string;
  out?: string;
  failOnRegression?: string;
  failOnConfigChange?: boolean;
  allowEnvMismatch?: boolean;
  noiseBand: string;
  alarmBudget: string;
  confirm: boolean;
  quiet?: boolean;
  json?: boolean;
}

export function registerHistory(program: Command): void {
  program
    .command('history')
    .description(
      'trend of every finished run in a reports folder: key metrics with CI bands, ' +
        'change points, chosen values, and the latest run against its baseline',
    )
    .argument('<reports-dir>', 'the folder runs write to (tunebench run --out; default reports)')
    .option('--experiment <name>', 'only this experiment (default: every experiment with runs)')
    .option(
      '--out <dir>',
      'where history.html, history.md, history.json and charts/ go, per experiment (default <reports-dir>/history)',
    )
    .option(
      '--fail-on-regression <pct>',
      `exit ${EXIT.regression} when the latest night is a regression beyond pct percent: ` +
        'flagged by the series gate against the reference nights and confirmed by a re-measurement',
    )
    .option('--no-confirm', 'fail on an alarm without re-measuring the flagged metrics first (no extra trials)')
    .option(
      '--alarm-budget <p>',
      'the chance of a false alarm per night for all experiments and metrics checked together',
      String(NIGHTLY_DEFAULTS.alpha),
    )
    .option('--quiet', 'no progress output from confirmation runs')
    .option(
      '--fail-on-config-change',
      `exit ${EXIT.configChanged} when the latest run chose another config than its baseline`,
    )
    .option(
      '--allow-env-mismatch',
      'compare with a baseline from another environment (device, driver, library versions), flagged in the output',
    )
    .option('--noise-band <fraction>', 'a ratio CI must lie outside 1 +/- this to count as a change', '0.02')
    .option('--json', 'print the findings as JSON on stdout')
    .addHelpText(
      'after',
      examples(
        'tunebench history reports',
        'tunebench history reports --experiment default --fail-on-regression 5 --fail-on-config-change',
      ),
    )
    .action(async (reportsArg: string, o: HistoryFlags) => {
      const threshold = parseRegressionPct(o.failOnRegression) ?? null;
      const band = parseNoiseBand(o.noiseBand);
      const reports = resolve(reportsArg);
      const index = await indexRuns(reports);
      for (const w of index.warnings) process.stderr.write(terminalLines(`tunebench: warning: ${w}\n`));
      if (index.runs.length === 0)
        throw new ConfigError(
          `${reportsArg} holds no finished run (${index.skipped.length} unfinished or damaged); ` +
            `run ${printedCommand(['tunebench', 'run', '--out', reportsArg])} first`,
        );
      const budget = Number(o.alarmBudget);
      if (!(budget > 0 && budget < 0.5))
        throw new ConfigError(
          `--alarm-budget: expected a probability above 0 and below 0.5, got ${JSON.stringify(o.alarmBudget)}`,
        );
      const confirm = threshold !== null && o.confirm !== false;
      const opts: HistoryOptions & { experiment?: string } = {
        failPct: threshold ?? 0,
        noiseBand: band,
        allowEnvMismatch: o.allowEnvMismatch === true,
        alarmBudget: budget,
        confirm,
        ...(o.experiment !== undefined ? { experiment: o.experiment } : {}),
      };
      const outRoot = requireOutDir('--out', resolve(o.out ?? join(reports, 'history')));
      await withHistoryLock(reports, confirm, process.argv.slice(1).join(' '), () =>
        historyCommand({ reports, index, opts: { ...opts, outRoot }, threshold, flags: o, confirm }),
      );
    });
  registerBaseline(program);
}

interface HistoryRun {
  reports: string;
  index: HistoryIndex;
  opts: HistoryOptions & { experiment?: string; outRoot: string };
  threshold: number | null;
  flags: HistoryFlags;
  confirm: boolean;
}

/** Confirmations show their progress on stderr and stop on the stop signals. */
function confirmWiring(outRoot: string, quiet: boolean): ConfirmWiring {
  return {
    outRoot,
    progress: () => createProgress(quiet ? 'quiet' : process.stderr.isTTY ? 'tty' : 'plain'),
    stoppable: withStopSignals,
  };
}

/** Analyzes, confirms pending alarms, writes the history reports and sets the exit code. */
async function historyCommand({ reports, index, opts, threshold, flags: o, confirm }: HistoryRun): Promise<void> {
  const outRoot = opts.outRoot;
  const histories = await analyzeConfirmed(index.runs, opts, confirm ? confirmWiring(outRoot, o.quiet === true) : null);
  // Only an exit 3 calls for a bisection: the regression gate's failures.
  const hints = new Map(histories.map((h) => [h, threshold === null ? null : bisectHint(h, index.runs)]));
  const { written, markdown } = await writeHistories(outRoot, histories, threshold, hints);
  appendStepSummary(markdown.join('\n'));
  const failed = histories.filter((h) => threshold !== null && failingMetrics(h.gate).length > 0);
  const changed = histories.filter((h) => o.failOnConfigChange && (h.gate?.config_changes.length ?? 0) > 0);
  if (o.json) {
    const summary = {
      reports,
      skipped: index.skipped,
      experiments: histories.map((h) => historyJson(h, threshold, hints.get(h) ?? null)),
      reports_written: written,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } else {
    for (const h of histories)
      process.stdout.write(
        `${h.experiment}: ${h.runs} runs\n${findings(h, threshold)
          .map((f) => `  ${f.text}`)
          .join('\n')}\n`,
      );
    if (index.skipped.length > 0)
      process.stdout.write(
        `skipped ${index.skipped.length} unfinished or damaged run(s), e.g. ` +
          `${index.skipped[0]!.dir}: ${index.skipped[0]!.why}\n`,
      );
    process.stdout.write(`history: ${written.map(printablePath).join(', ')}\n`);
  }
  if (failed.length > 0) {
    process.stderr.write(
      `tunebench: regression beyond ${threshold}% in ${failed.map((h) => h.experiment).join(', ')}\n`,
    );
    for (const h of failed)
      process.stderr.write(terminalLines(`tunebench: ${bisectLine(h.experiment, hints.get(h)!)}\n`));
    process.exitCode = EXIT.regression;
  } else if (changed.length > 0) {
    process.stderr.write(`tunebench: the chosen config changed in ${changed.map((h) => h.experiment).join(', ')}\n`);
    process.exitCode = EXIT.configChanged;
  }
}
