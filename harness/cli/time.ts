// `tunebench time '<cmd>' ['<cmd>' ...]` and `tunebench claim '<claim>' --baseline '<cmd>' --candidate '<cmd>'`:
// the one-liners. Each builds an experiment in memory, runs it like a file (run directory, journal,
// report), then prints what the stage found.
import { Command, Option } from 'commander';
import { join, resolve } from 'node:path';
import { timeSummary, type TimeSummary } from '../analysis/time-summary.js';
import { createProgress, terminalLines } from '../engine/progress.js';
import { runExperiment } from '../engine/run-experiment.js';
import { ConfigError, EXIT } from '../errors.js';
import type { LoadedExperiment } from '../experiment/load.js';
import { claimExperiment, timeExperiment, type ClaimRequest, type Runner } from '../experiment/one-liner.js';
import type { Experiment } from '../experiment/schema.js';
import { stageWarnings } from '../report/run-warnings.js';
import { timeMarkdown, timeText } from '../report/time.js';
import { writeFileAtomic } from '../store/atomic.js';
import { readRunDir } from '../store/read-run.js';
import { shellLine } from '../util/shell.js';
import type { RunResult } from '../domain/index.js';
import { addCommonOptions, appendStepSummary, progressMode, resolveCommon, type CommonOptions } from './common.js';
import { withStopSignals } from './signals.js';

/** The flags -L and --parameter-list, which take two words (hyperfine's `-L name v1,v2`). */
const SCAN_FLAGS = ['-L', '--parameter-list'];

/**
 * Joins `-L name values` into `-L name=values`, which commander can take as one option value; only
 * within the `time` command, and only where the name has no "=" already.
 */
export function joinScanFlags(argv: readonly string[]): string[] {
  const at = argv.indexOf('time', 2);
  if (at < 0 || argv.slice(2, at).some((a) => !a.startsWith('-'))) return [...argv];
  const out = argv.slice(0, at + 1);
  for (let i = at + 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (SCAN_FLAGS.includes(a) && argv[i + 1] !== undefined && !argv[i + 1]!.includes('=')) {
      if (argv[i + 2] === undefined)
        throw new ConfigError(`${a} ${argv[i + 1]}: give the values too, e.g. -L ${argv[i + 1]} 0,2,4`);
      out.push(a, `${argv[i + 1]}=${argv[i + 2]}`);
      i += 2;
    } else out.push(a);
  }
  return out;
}

const count = (flag: string, least: number) => (value: string) => {
  const n = Number(value);
  if (!(Number.isInteger(n) && n >= least))
    throw new ConfigError(`${flag}: expected an integer of at least ${least}, got ${JSON.stringify(value)}`);
  return n;
};

function runnerOptions(cmd: Command): Command {
  return cmd
    .option('--warmup <n>', 'untimed runs of each command before the timed ones (warm caches)', count('--warmup', 0), 0)
    .option('--prepare <cmd>', 'a command run before every run, untimed (clear a cache, reset files)')
    .option('--shell', 'run the commands through /bin/sh -c (pipes, variables, globs); default: no shell', false)
    .option('--timeout <duration>', 'kill a run after this long (seconds, or "90s", "5m"); default 300 s');
}

/** What commander gives the action for runnerOptions (and the flags every command has). */
type RunnerFlags = {
  out?: string;
  json?: boolean;
  quiet?: boolean;
  shell?: boolean;
  warmup?: number;
  name?: string;
  prepare?: string;
  timeout?: string;
};
type TimeFlags = RunnerFlags & {
  parameterList?: string[];
  runs?: number;
  exportJson?: string;
  exportMarkdown?: string;
};
/** The claim request's own fields come from commander under the same names. */
type ClaimFlags = RunnerFlags &
  Pick<ClaimRequest, 'baseline' | 'candidate' | 'metric' | 'source' | 'minPairs' | 'maxPairs'>;

function runner(raw: RunnerFlags, name: string): Runner {
  return {
    shell: raw.shell === true,
    warmup: raw.warmup ?? 0,
    name: raw.name ?? name,
    ...(raw.prepare !== undefined ? { prepare: raw.prepare } : {}),
    ...(raw.timeout !== undefined ? { timeout: raw.timeout } : {}),
  };
}

/** The command line as typed, for run.json and the Markdown heading. */
function typed(argv: readonly string[]): string {
  return `tunebench ${shellLine(argv.slice(2))}`;
}

async function run(experiment: Experiment, commandLine: string, o: CommonOptions): Promise<RunResult> {
  const loaded: LoadedExperiment = {
    experiment,
    // Relative paths in the commands resolve against the directory tunebench was started in.
    source: join(process.cwd(), `<${experiment.name}>`),
    text: `# ${commandLine}\n${JSON.stringify(experiment, null, 2)}\n`,
  };
  const progress = createProgress(progressMode(o));
  const result = await withStopSignals((signal) =>
    runExperiment({ experimentPath: loaded.source, loaded, outDir: o.out, progress, signal }),
  ).finally(() => progress.finish());
  if (result.failed_stages.length > 0) process.exitCode = EXIT.invalid;
  return result;
}

export function registerTime(program: Command): void {
  const cmd = addCommonOptions(
    runnerOptions(
      program
        .command('time')
        .description(
          'time commands as whole processes (or by their step events), interleaved: medians with 95% CIs, ' +
            'and each command against the first with the statistics of a compare stage',
        )
        .argument('<command...>', 'commands to time, each one argument (quote it)')
        .addOption(
          new Option(
            '-L, --parameter-list <name values>',
            'scan a parameter: -L workers 0,2,4 runs the command once per value, with {workers} replaced; ' +
              'repeat for every combination',
          ).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]),
        )
        .option(
          '--runs <n>',
          'timed runs of each command; default: adaptive (rounds until each verdict is decided, at most 20), ' +
            'or 10 for one command',
          count('--runs', 1),
        )
        .option('--name <name>', 'the run name: run directories go to <out>/<name>/', 'time')
        .option('--export-json <file>', 'write the medians, CIs and verdicts as JSON')
        .option('--export-markdown <file>', 'write them as a Markdown table'),
    ),
  );
  cmd.addHelpText(
    'after',
    [
      '',
      'Examples:',
      "  tunebench time 'python a.py' 'python b.py'",
      "  tunebench time --warmup 1 --export-markdown times.md 'sleep 0.1' 'sleep 0.12'",
      "  tunebench time -L workers 0,2,4 'python train.py --num-workers {workers}'",
      '',
      'Commands are split into arguments without a shell (quotes work as in a shell); --shell runs them ' +
        "through /bin/sh -c. A program that sends the workload protocol's step events is timed by its steps " +
        '(samples/s); any other by its whole-process wall time. Exit status: 0, or 2 when a command never ran.',
    ].join('\n'),
  );
  cmd.action(async (commands: string[], raw: TimeFlags) => {
    const o = resolveCommon(raw);
    const scans = (raw.parameterList ?? []).map((v) => {
      const eq = v.indexOf('=');
      if (eq <= 0) throw new ConfigError(`-L ${v}: expected -L name values, e.g. -L workers 0,2,4`);
      return { name: v.slice(0, eq), values: [v.slice(eq + 1)] };
    });
    const { experiment, mode } = timeExperiment({
      ...runner(raw, 'time'),
      commands,
      scans,
      ...(raw.runs !== undefined ? { runs: raw.runs } : {}),
    });
    const line = typed(process.argv);
    const result = await run(experiment, line, o);
    const summary = timeSummary(mode, result, readRunDir(result.run_dir).records);
    writeTimeFiles(summary, line, raw);
    appendStepSummary(timeMarkdown(summary, line));
    reportFailedCommands(summary);
    if (o.json) {
      process.stdout.write(`${JSON.stringify({ ...summary, result }, null, 2)}\n`);
      return;
    }
    // --quiet hides the progress, never the results; warnings follow the table as in `tunebench run`.
    const warnings = stageWarnings(result, readRunDir(result.run_dir).records).map((w) => `\nwarning: ${w}`);
    process.stdout.write(
      terminalLines(
        `${timeText(summary)}\n${warnings.join('')}\nrun directory: ${result.run_dir}\nreport: ${result.files['report']}\n`,
      ),
    );
  });
}

/**
 * A command (not a scanned value, which may fail as data) that failed at every run makes the timing
 * meaningless: exit 2 and say which. A scan exits 2 when every value failed (a failed stage).
 */
function reportFailedCommands(summary: TimeSummary): void {
  if (summary.mode === 'scan') return;
  const failed = summary.commands.filter((c) => c.failed_every_run);
  if (failed.length === 0) return;
  process.exitCode = EXIT.invalid;
  for (const c of failed) {
    const how = Object.entries(c.failures)
      .map(([outcome, n]) => `${n} ${outcome}`)
      .join(', ');
    process.stderr.write(
      terminalLines(
        `tunebench: ${c.label} failed at every run (${how || 'no run'}): ` +
          'check that it runs on its own (exit status 0); exit 2\n',
      ),
    );
  }
}

/** time.json and time.md in the run directory, and the --export-* files. */
function writeTimeFiles(summary: TimeSummary, line: string, raw: TimeFlags): void {
  const json = `${JSON.stringify({ tunebench_time: 1, command_line: line, ...summary }, null, 2)}\n`;
  const markdown = timeMarkdown(summary, line);
  writeFileAtomic(join(summary.run_dir, 'time.json'), json);
  writeFileAtomic(join(summary.run_dir, 'time.md'), markdown);
  const exports: [string, string | undefined, string][] = [
    ['--export-json', raw.exportJson, json],
    ['--export-markdown', raw.exportMarkdown, markdown],
  ];
  for (const [flag, file, text] of exports) {
    if (file === undefined) continue;
    try {
      writeFileAtomic(resolve(file), text);
    } catch (error) {
      throw new ConfigError(
        `${flag} ${file}: cannot write it ` +
          `(${(error as Error).message}); the run itself is kept in ${summary.run_dir}`,
        [],
        { cause: error },
      );
    }
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
  cmd.action(async (claim: string, raw: ClaimFlags) => {
    const o = resolveCommon(raw);
    const experiment = claimExperiment({
      ...runner(raw, 'claim'),
      claim,
      baseline: raw.baseline,
      candidate: raw.candidate,
      ...(raw.metric !== undefined ? { metric: raw.metric } : {}),
      ...(raw.source !== undefined ? { source: raw.source } : {}),
      ...(raw.minPairs !== undefined ? { minPairs: raw.minPairs } : {}),
      ...(raw.maxPairs !== undefined ? { maxPairs: raw.maxPairs } : {}),
    });
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
