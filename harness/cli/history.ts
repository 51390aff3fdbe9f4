// `tunebench history <reports-dir>`: trend charts, change points and the latest run's gate against its
// baseline, per experiment; `tunebench baseline set|show|clear` pins the baseline.
import type { Command } from 'commander';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, EXIT, StoppedError } from '../errors.js';
import { historyChart } from '../history/chart.js';
import { indexRuns, readRunEntry } from '../history/index.js';
import { historyHtml, historyMarkdown, findings } from '../history/render.js';
import { confirmAlarms, STOPPED_PREFIX } from '../history/confirm.js';
import { NIGHTLY_DEFAULTS } from '../stats/nightly.js';
import { createProgress } from '../engine/progress.js';
import {
  analyzeHistory,
  appendConfirmations,
  BASELINE_FILE,
  failingMetrics,
  readAccepted,
  readBaseline,
  seriesDecides,
  writeAccepted,
  writeBaseline,
  type ExperimentHistory,
  type HistoryOptions,
} from '../history/trend.js';
import type { RunEntry } from '../history/index.js';
import { withStopSignals } from './signals.js';
import { renderSvg } from '../report/render.js';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic.js';
import { experimentDirName, makeOwnDir } from '../store/run-dir.js';
import { appendStepSummary, examples, parseNoiseBand, parseRegressionPct } from './common.js';

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
      const index = indexRuns(reports);
      if (index.runs.length === 0)
        throw new ConfigError(
          `${reportsArg} holds no finished run (${index.skipped.length} unfinished or damaged); ` +
            `run tunebench run --out ${reportsArg} first`,
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
      let histories = analyzeHistory(index.runs, opts);
      const outRoot = resolve(o.out ?? join(reports, 'history'));
      if (confirm && (await confirmPending(histories, index.runs, outRoot, o.quiet === true)))
        histories = analyzeHistory(index.runs, opts);
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
        writeJsonAtomic(join(dir, 'history.json'), machine(h, threshold));
        markdown.push(text);
        written.push(join(dir, 'history.html'));
      }
      appendStepSummary(markdown.join('\n'));
      const failed = histories.filter((h) => threshold !== null && failingMetrics(h.gate).length > 0);
      const changed = histories.filter((h) => o.failOnConfigChange && (h.gate?.config_changes.length ?? 0) > 0);
      if (o.json) {
        const summary = {
          reports,
          skipped: index.skipped,
          experiments: histories.map((h) => machine(h, threshold)),
          reports_written: written,
        };
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      } else {
        for (const h of histories)
          process.stdout.write(
            `${h.experiment}: ${h.runs} runs\n${findings(h, threshold)
              .map((f) => `  ${f}`)
              .join('\n')}\n`,
          );
        if (index.skipped.length > 0)
          process.stdout.write(
            `skipped ${index.skipped.length} unfinished or damaged run(s), e.g. ` +
              `${index.skipped[0]!.dir}: ${index.skipped[0]!.why}\n`,
          );
        process.stdout.write(`history: ${written.join(', ')}\n`);
      }
      if (failed.length > 0) {
        process.stderr.write(
          `tunebench: regression beyond ${threshold}% in ${failed.map((h) => h.experiment).join(', ')}\n`,
        );
        process.exitCode = EXIT.regression;
      } else if (changed.length > 0) {
        process.stderr.write(
          `tunebench: the chosen config changed in ${changed.map((h) => h.experiment).join(', ')}\n`,
        );
        process.exitCode = EXIT.configChanged;
      }
    });

  const baseline = program
    .command('baseline')
    .description('pin the run that `tunebench history` compares the latest run with')
    .addHelpText(
      'after',
      examples('tunebench baseline set reports/default/<run-id>', 'tunebench baseline show reports/default'),
    );
  baseline
    .command('set')
    .description("pin a finished run as its experiment's baseline (<reports>/<experiment>/baseline.json)")
    .argument('<run-dir>', 'a finished run directory')
    .addHelpText('after', examples('tunebench baseline set reports/default/<run-id>'))
    .action((runArg: string) => {
      const { dir, entry } = finishedRun(runArg, `pin ${runArg} as the baseline`);
      const path = writeBaseline(dir, {
        run_id: entry.run_id,
        set_at: new Date().toISOString(),
        env_key: entry.env_key,
      });
      process.stdout.write(
        `baseline of ${entry.experiment}: ${entry.run_id} (environment ${entry.env_key}: ${entry.env_label}); ` +
          `written to ${path}\n`,
      );
    });
  baseline
    .command('accept')
    .description(
      'accept a flagged run as the new level: the nightly gate takes it (and the nights after it) ' +
        'as the reference from now on (<reports>/<experiment>/accepted.json)',
    )
    .argument('<run-dir>', 'a finished run directory, usually the latest night that history flagged')
    .addHelpText('after', examples('tunebench baseline accept reports/default/<run-id>'))
    .action((runArg: string) => {
      const { dir, entry } = finishedRun(runArg, `accept ${runArg}`);
      const expDir = dirname(dir);
      const accepted = readAccepted(expDir);
      if (accepted.some((a) => a.run_id === entry.run_id)) {
        process.stdout.write(`${entry.experiment}: ${entry.run_id} was already accepted\n`);
        return;
      }
      const path = writeAccepted(expDir, [...accepted, { run_id: entry.run_id, at: new Date().toISOString() }]);
      process.stdout.write(
        `${entry.experiment}: ${entry.run_id} accepted as a new level: ` +
          `the nightly gate compares later nights with it; written to ${path}\n`,
      );
    });
  baseline
    .command('show')
    .description('print the pinned baseline of an experiment folder')
    .argument('<experiment-dir>', 'e.g. reports/default')
    .addHelpText('after', examples('tunebench baseline show reports/default'))
    .action((dirArg: string) => {
      const pin = readBaseline(resolve(dirArg));
      const accepted = readAccepted(resolve(dirArg));
      process.stdout.write(
        pin
          ? `${JSON.stringify(pin)}\n`
          : `no pinned baseline in ${dirArg}: history compares the latest run with the run before it\n`,
      );
      if (accepted.length > 0)
        process.stdout.write(`accepted as new levels: ${accepted.map((a) => `${a.run_id} (${a.at})`).join(', ')}\n`);
    });
  baseline
    .command('clear')
    .description('remove the pinned baseline of an experiment folder')
    .argument('<experiment-dir>', 'e.g. reports/default')
    .addHelpText('after', examples('tunebench baseline clear reports/default'))
    .action((dirArg: string) => {
      const path = join(resolve(dirArg), BASELINE_FILE);
      rmSync(path, { force: true });
      process.stdout.write(`removed ${path}\n`);
    });
}

/** The finished run a baseline command names, or a ConfigError that says why it cannot do `toDo`. */
function finishedRun(runArg: string, toDo: string): { dir: string; entry: RunEntry } {
  const dir = resolve(runArg);
  if (!existsSync(join(dir, 'run.json')))
    throw new ConfigError(`${runArg} is not a run directory (run.json is missing)`);
  const entry = readRunEntry(dir);
  if ('why' in entry) throw new ConfigError(`cannot ${toDo}: ${entry.why}`);
  return { dir, entry };
}

/**
 * Runs the confirmations of every regression alarm waiting for one and records them in
 * <reports>/<experiment>/confirmations.json; true when any ran (the history is then analyzed again).
 */
async function confirmPending(
  histories: readonly ExperimentHistory[],
  runs: readonly RunEntry[],
  outRoot: string,
  quiet: boolean,
): Promise<boolean> {
  let ran = false;
  for (const h of histories) {
    const g = h.gate;
    if (!g || !seriesDecides(g)) continue;
    const pending = g.series!.metrics.filter((m) => m.pending);
    if (pending.length === 0) continue;
    const latest = runs.find((r) => r.run_id === g.latest.run_id && r.dir === g.latest.dir)!;
    // The reference level's latest night: its config is measured beside tonight's.
    const refId = pending[0]!.alarm?.reference_to;
    const reference =
      runs.find((r) => r.run_id === refId && r.experiment === h.experiment && r.env_key === latest.env_key) ?? null;
    const progress = createProgress(quiet ? 'quiet' : process.stderr.isTTY ? 'tty' : 'plain');
    const done = await withStopSignals((signal) =>
      confirmAlarms(latest, reference, pending, {
        outDir: join(outRoot, experimentDirName(h.experiment), 'confirm'),
        progress,
        signal,
        minDrop: g.series!.min_drop,
      }),
    ).finally(() => progress.finish());
    // A confirmation cut short by a signal is not evidence either way: nothing is recorded, and the
    // next history runs it again.
    const stopped = done.find((c) => c.error?.startsWith(STOPPED_PREFIX));
    if (stopped) throw new StoppedError(`${stopped.error}; run tunebench history again to confirm`);
    appendConfirmations(dirname(latest.dir), done);
    ran = true;
  }
  return ran;
}

/** The findings for machines: no trial data, just the series, change points and the gate. */
function machine(h: ExperimentHistory, threshold: number | null): unknown {
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
  };
}
