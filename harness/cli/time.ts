// `tunebench time '<cmd>' ['<cmd>' ...]` and `tunebench claim '<claim>' --baseline '<cmd>' --candidate '<cmd>'`:
// the one-liners. Each builds an experiment in memory, runs it like a file (run directory, journal,
// report), then prints what the stage found.
import { ContainedCommands } from '../trial/contained-commands.js';
import { Command, Option } from 'commander';
import { join } from 'node:path';
import { relabelScan, timeSummary, type TimeSummary } from '../analysis/time-summary.js';
import { runOnce } from '../engine/once-commands.js';
import { createProgress, terminalLines, type ProgressMode } from './progress.js';
import { runExperiment } from '../engine/run-experiment.js';
import { ConfigError, EXIT } from '../errors.js';
import type { LoadedExperiment } from '../experiment/load.js';
import { onceCommands } from '../experiment/one-liner.js';
import { claimRequest, timeRequest, type ClaimFlags, type TimeRequestFlags } from '../experiment/time-flags.js';
import type { Experiment } from '../experiment/schema.js';
import {
  SORT_ORDERS,
  sortedSummary,
  TIME_UNITS,
  timeMarkdown,
  timeText,
  type SortOrder,
  type TimeUnit,
} from '../report/time.js';
import { exportName, writeTimeFiles } from '../report/time-export.js';
import { stageWarnings } from '../report/run-warnings.js';
import { shellLine } from '../util/shell.js';
import { addCommonOptions, appendStepSummary, progressMode, resolveCommon, type CommonOptions } from './common.js';
import { withStopSignals } from './signals.js';
import { timeBaselines, type TimeBaselineFlags } from './time-baseline.js';
import { readRunDir, type RunResult } from '../experiment/run-file.js';
import { claimExperiment, timeExperiment } from '../engine/load.js';

const count = (flag: string, least: number) => (value: string) => {
  const n = Number(value);
  if (!(Number.isInteger(n) && n >= least))
    throw new ConfigError(`${flag}: expected an integer of at least ${least}, got ${JSON.stringify(value)}`);
  return n;
};
const repeatable = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/** Flags of `time` and `claim`: how each command runs. */
function runnerOptions(cmd: Command): Command {
  return cmd
    .option(
      '-w, --warmup <n>',
      'untimed runs of each command before the timed ones (warm caches)',
      count('--warmup', 0),
      0,
    )
    .option('-p, --prepare <cmd>', 'a command run before every run, untimed (clear a cache, reset files)')
    .option(
      '-S, --shell <shell>',
      "run each command as <shell> -c '<cmd>' (pipes, variables, globs), e.g. -S sh or -S 'bash --norc'; " +
        'default: none (split into arguments without a shell)',
    )
    .option('-N', 'no shell (--shell=none): the default')
    .option('--timeout <duration>', 'kill a run after this long (seconds, or "90s", "5m"); default 300 s');
}

/** -r, -m, -M: how many rounds. */
function roundOptions(cmd: Command): Command {
  return cmd
    .option(
      '-r, --runs <n>',
      'timed runs of each command; default: adaptive (rounds until each verdict is decided, 6 to 20), ' +
        'or 10 for one command',
      count('--runs', 1),
    )
    .option(
      '-m, --min-runs <n>',
      'the fewest rounds (default 6 when comparing, 3 for a scan, 10 for one command)',
      count('--min-runs', 1),
    )
    .option('-M, --max-runs <n>', 'the most rounds (default 20; 10 for one command)', count('--max-runs', 1));
}

/** -s, -C, -c: commands around the runs. */
function hookOptions(cmd: Command): Command {
  return cmd
    .option('-s, --setup <cmd>', 'run once per command before its first run (warm-ups included), untimed')
    .option('-C, --conclude <cmd>', 'run after every run, untimed')
    .option('-c, --cleanup <cmd>', 'run once per command after its last run, untimed');
}

/** -L, -P, -D: scans of a parameter. */
function scanOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '-L, --parameter-list <name values>',
        'scan a parameter: -L workers 0,2,4 runs the command once per value, with {workers} replaced; ' +
          'repeat for every combination',
      ).argParser(repeatable),
    )
    .addOption(
      new Option(
        '-P, --parameter-scan <name min max>',
        'scan a range: -P threads 1 8 is -L threads 1,2,...,8 (integers, or steps of -D)',
      ).argParser(repeatable),
    )
    .option('-D, --parameter-step-size <delta>', 'the step of -P (default 1; may be a decimal, e.g. -D 0.2)');
}

/** -n, --reference, -i, --show-output, --output, --input: what each command is and sees. */
function commandOptions(cmd: Command): Command {
  return cmd
    .option('-n, --command-name <name>', 'a name for a command, once per command in order (the labels)', repeatable)
    .option('--reference <cmd>', 'the command every other is compared with (default: the first command)')
    .option('-i, --ignore-failure', 'a run that exits non-zero is still a timed run (its exit code is kept)')
    .option('--show-output', "the commands' stdout and stderr go to the terminal (same as --output inherit)")
    .option(
      '--output <where>',
      "the commands' stdout: null (discarded, the default), pipe (read and discarded), inherit (the terminal) " +
        'or a file (rewritten at every run); stderr is kept for a failed run in any case',
    )
    .option('--input <file>', 'a file the commands read as their stdin (default: none)');
}

/** -u, --sort, --style and the exports: what is shown and written. */
function outputOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('-u, --time-unit <unit>', 'the unit of times on the terminal and in the tables').choices(TIME_UNITS),
    )
    .addOption(
      new Option('--sort <order>', 'rows: auto and command keep the order given, mean-time sorts by mean time')
        .choices(SORT_ORDERS)
        .default('auto'),
    )
    .addOption(
      new Option(
        '--style <style>',
        'basic and color: plain progress lines; full: the live status line; nocolor: as auto; ' +
          'none: nothing on the terminal (exports and the exit status stay)',
      ).choices(STYLES),
    )
    .option('--export-json <file>', "write hyperfine's JSON (results[]), with tunebench's CIs and verdicts")
    .option('--export-csv <file>', "write hyperfine's CSV (seconds)")
    .option('--export-markdown <file>', 'write the table (medians, CIs, verdicts) as Markdown')
    .option('--export-asciidoc <file>', 'write the table as AsciiDoc')
    .option('--export-orgmode <file>', 'write the table as an Emacs Org table');
}

const STYLES = ['auto', 'basic', 'full', 'nocolor', 'color', 'none'] as const;
type Style = (typeof STYLES)[number];

/** The flags every command has, beside a request's own. */
type CommonFlags = { out?: string; json?: boolean; quiet?: boolean };
/** What commander gives the action of `time`: the request's flags, then what is shown and exported. */
type TimeFlags = CommonFlags &
  TimeRequestFlags & {
    timeUnit?: TimeUnit;
    sort?: SortOrder;
    style?: Style;
    exportJson?: string;
    exportCsv?: string;
    exportMarkdown?: string;
    exportAsciidoc?: string;
    exportOrgmode?: string;
  };

/** The command line as typed, for run.json and the Markdown heading. */
function typed(argv: readonly string[]): string {
  return `tunebench ${shellLine(argv.slice(2))}`;
}

async function run(
  experiment: Experiment,
  commandLine: string,
  o: CommonOptions,
  mode: ProgressMode = progressMode(o),
): Promise<RunResult> {
  const loaded: LoadedExperiment = {
    experiment,
    // Relative paths in the commands resolve against the directory tunebench was started in.
    source: join(process.cwd(), `<${experiment.name}>`),
    text: `# ${commandLine}\n${JSON.stringify(experiment, null, 2)}\n`,
  };
  const progress = createProgress(mode);
  const result = await withStopSignals((signal) =>
    // The one-liners draw no charts (about half a second of vega per invocation): `tunebench report` draws them.
    runExperiment({ experimentPath: loaded.source, loaded, outDir: o.out, progress, signal, drawCharts: false }),
  ).finally(() => progress.finish());
  if (result.failed_stages.length > 0) process.exitCode = EXIT.invalid;
  return result;
}
/** --save-baseline and --baseline (harness/cli/time-baseline.ts does the work). */
function baselineOptions(cmd: Command): Command {
  return cmd
    .option('--save-baseline <name>', 'save the per-run times and environment as <out>/baselines/<name>.json')
    .option('--baseline <name>', 'compare each command with the runs saved by --save-baseline <name> (unpaired)');
}

export function registerTime(program: Command): void {
  const base = program
    .command('time')
    .description(
      'time commands as whole processes (or by their step events), interleaved: medians with 95% CIs, ' +
        "and each command against the first (or --reference) with a compare stage's statistics; hyperfine's flags",
    )
    .argument('[command...]', 'commands to time, each one argument (quote it)')
    .option('--name <name>', 'the run name: run directories go to <out>/<name>/', 'time');
  const cmd = addCommonOptions(
    baselineOptions(outputOptions(commandOptions(scanOptions(hookOptions(roundOptions(runnerOptions(base))))))),
  );
  cmd.addHelpText(
    'after',
    [
      '',
      'Examples:',
      "  tunebench time 'python a.py' 'python b.py'",
      "  tunebench time -w 1 -r 10 --export-json times.json 'sleep 0.1' 'sleep 0.12'",
      "  tunebench time -L workers 0,2,4 'python train.py --num-workers {workers}'",
      "  tunebench time -P t 1 3 -s 'make -j{t}' -S sh 'ls | wc -l'",
      '',
      "hyperfine's flags mean what they mean there, except that the commands run in interleaved rounds " +
        '(so every --setup runs before the first round and every --cleanup after the last), rounds are ' +
        'adaptive (until each verdict is decided), and there is no shell unless -S/--shell names one ' +
        "(docs/cli.md has the table). A program that sends the workload protocol's step events is timed " +
        'by its steps (samples/s); any other by its whole-process wall time. ' +
        'Exit status: 0, or 2 when a command never ran.',
    ].join('\n'),
  );
  cmd.action(async (commands: string[], raw: TimeFlags & TimeBaselineFlags) => {
    const o = resolveCommon(raw);
    // A --baseline that does not exist fails now, not after the whole benchmark.
    const baselines = timeBaselines(raw, o);
    const req = timeRequest(commands, raw);
    const { experiment, mode } = timeExperiment(req);
    const hooks = onceCommands(req);
    // --setup and --cleanup run contained: what they leave running is ended with the run (issue 45).
    const contained = new ContainedCommands('time-commands');
    let result: Awaited<ReturnType<typeof run>>;
    let cleanupError: string | undefined;
    try {
      runOnce(hooks.setup, '--setup', experiment.limits.timeout, contained);
      result = await run(experiment, typed(process.argv), o, styleProgress(raw.style ?? 'auto', o));
      cleanupError = attempt(() => runOnce(hooks.cleanup, '--cleanup', experiment.limits.timeout, contained));
    } finally {
      contained.end();
    }
    const line = typed(process.argv);
    const style = raw.style ?? 'auto';
    // The journal is read once: the summary and the warnings come from the same records.
    const records = readRunDir(result.run_dir).records;
    const summary = relabelScan(timeSummary(mode, result, records), req);
    const shown = sortedSummary(summary, raw.sort);
    writeTimeFiles({
      summary,
      shown,
      line,
      unit: raw.timeUnit,
      exports: {
        json: raw.exportJson,
        csv: raw.exportCsv,
        markdown: raw.exportMarkdown,
        asciidoc: raw.exportAsciidoc,
        orgmode: raw.exportOrgmode,
      },
      command: exportName(req),
    });
    baselines.finish(summary, line);
    appendStepSummary(timeMarkdown(shown, line, unitOf(raw)));
    reportFailedCommands(summary, style !== 'none');
    if (cleanupError) {
      process.exitCode = EXIT.invalid;
      process.stderr.write(terminalLines(`tunebench: ${cleanupError}; exit 2\n`));
    }
    if (o.json) {
      process.stdout.write(`${JSON.stringify({ ...summary, result }, null, 2)}\n`);
      return;
    }
    // --quiet hides the progress, never the results; warnings follow the table as in `tunebench run`.
    if (style === 'none') return;
    const warnings = stageWarnings(result, records).map((w) => `\nwarning: ${w}`);
    process.stdout.write(
      terminalLines(
        `${timeText(shown, unitOf(raw))}\n${warnings.join('')}\nrun directory: ${result.run_dir}\nreport: ${result.files['report']}\n`,
      ),
    );
  });
}

const unitOf = (raw: TimeFlags) => (raw.timeUnit ? { unit: raw.timeUnit } : {});

/** The message of the ConfigError that `fn` threw, or undefined when it ran. */
function attempt(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

/** --style as the progress mode: none (and --quiet) show none, full the live line, basic and color plain lines. */
function styleProgress(style: Style, o: CommonOptions): ProgressMode {
  if (style === 'none' || o.quiet) return 'quiet';
  if (style === 'full') return 'tty';
  if (style === 'basic' || style === 'color') return 'plain';
  return progressMode(o);
}

/**
 * A command (not a scanned value, which may fail as data) that failed at every run makes the timing
 * meaningless: exit 2 and, unless --style none, say which. A scan exits 2 when every value failed.
 */
function reportFailedCommands(summary: TimeSummary, say: boolean): void {
  if (summary.mode === 'scan') return;
  const failed = summary.commands.filter((c) => c.failed_every_run);
  if (failed.length === 0) return;
  process.exitCode = EXIT.invalid;
  if (!say) return;
  for (const c of failed) {
    const how = Object.entries(c.failures)
      .map(([outcome, n]) => `${n} ${outcome}`)
      .join(', ');
    process.stderr.write(
      terminalLines(
        `tunebench: ${c.label} failed at every run (${how || 'no run'}): ` +
          'check that it runs on its own (exit status 0), or time it anyway with -i/--ignore-failure; exit 2\n',
      ),
    );
  }
}

/** Exit status of `tunebench claim`: 0 only for a confirmed claim. */
export const CLAIM_EXIT = { confirmed: 0, otherwise: 1 } as const;

export function registerClaim(program: Command): void {
  const cmd = addCommonOptions(
    runnerOptions(
      program
        .command('claim')
        .description(
          'check a claimed effect ("2-3x faster", ">=1.3x", "30% less memory") on two commands: ' +
            'interleaved pairs until a sequential 95% CI decides',
        )
        .argument('<claim>', 'the claim as people write it, e.g. "2-3x" or "at least 20% faster"')
        .requiredOption('--baseline <cmd>', 'the "before" command')
        .requiredOption('--candidate <cmd>', 'the "after" command')
        .addOption(
          new Option(
            '--metric <metric>',
            'what is measured (default: peak_memory for a memory claim, else throughput)',
          ).choices(['throughput', 'step_time', 'process_time', 'peak_memory']),
        )
        .option('--source <text>', 'where the claim comes from, for the report')
        .option('--min-pairs <n>', 'pairs before the first look (default 5)', count('--min-pairs', 3))
        .option('--max-pairs <n>', 'the most pairs (default 20)', count('--max-pairs', 3))
        .option('--name <name>', 'the run name: run directories go to <out>/<name>/', 'claim'),
    ),
  );
  cmd.addHelpText(
    'after',
    [
      '',
      'Examples:',
      "  tunebench claim '2-3x' --baseline 'python train.py --workers 0' --candidate 'python train.py --workers 4'",
      "  tunebench claim '>=20% faster' --baseline 'sleep 0.25' --candidate 'sleep 0.1'",
      '',
      `Exit status: ${CLAIM_EXIT.confirmed} when the claim is confirmed; ${CLAIM_EXIT.otherwise} when it falls ` +
        `short, exceeds the claim, is inconclusive or skipped; ${EXIT.invalid} on invalid input.`,
    ].join('\n'),
  );
  cmd.action(async (claim: string, raw: ClaimFlags & CommonFlags) => {
    const o = resolveCommon(raw);
    const experiment = claimExperiment(claimRequest(claim, raw));
    const result = await run(experiment, typed(process.argv), o);
    const stage = result.stages[0];
    if (stage?.kind !== 'claim') throw new Error('tunebench claim: the run has no claim stage');
    const c = stage.result;
    process.exitCode = c.verdict === 'confirmed' ? CLAIM_EXIT.confirmed : CLAIM_EXIT.otherwise;
    if (o.json) {
      process.stdout.write(`${JSON.stringify({ ...c, run_dir: result.run_dir, result }, null, 2)}\n`);
      return;
    }
    // --quiet hides the progress, never the verdict; the warnings are those `tunebench run` prints.
    const warnings = stageWarnings(result, readRunDir(result.run_dir).records).map((w) => `warning: ${w}`);
    process.stdout.write(terminalLines([c.sentence, ...warnings, `run directory: ${result.run_dir}`, ''].join('\n')));
  });
}
