// `tunebench bisect --good <rev> --bad <rev> [--build '<cmd>'] <experiment file>` and the one-liner
// `tunebench bisect --good A --bad B -- '<cmd>'`: wiring only (engine/bisect.ts runs it).
import { Command } from 'commander';
import { join, resolve } from 'node:path';
import { createProgress, terminalLines } from './progress.js';
import { BISECT_DEFAULTS, resumeBisection, runBisection, type BisectDone, type StepEvent } from '../engine/bisect.js';
import { ConfigError, EXIT } from '../errors.js';
import { experimentFileProblem, type LoadedExperiment } from '../experiment/load.js';
import { parseDuration } from '../experiment/units.js';
import { answerLines, stepLine } from '../report/bisect.js';
import { addCommonOptions, examples, parseNoiseBand, printablePath, progressMode, resolveCommon } from './common.js';
import { withStopSignals } from './signals.js';
import { loadExperiment, timeExperiment } from '../engine/load.js';

interface BisectFlags {
  good?: string;
  bad?: string;
  repo: string;
  build?: string;
  buildTimeout?: string;
  resume?: string;
  minRounds?: string;
  maxRounds?: string;
  maxSteps?: string;
  noiseBand?: string;
  shell?: string;
  timeout?: string;
  name?: string;
  executor?: string;
  draw: boolean;
}

const count = (flag: string, v: string | undefined, least: number): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!(Number.isInteger(n) && n >= least))
    throw new ConfigError(`${flag}: expected an integer of at least ${least}, got ${JSON.stringify(v)}`);
  return n;
};

/** The experiment file, or the one-liner's command as an experiment (timed as `tunebench time` does). */
function loadTarget(operands: string[], f: BisectFlags, repo: string): { loaded: LoadedExperiment; fromFile: boolean } {
  if (operands.length !== 1)
    throw new ConfigError(
      `bisect takes one experiment file or one command after --, got ${operands.length}; ` +
        "e.g. tunebench bisect --good v1 --bad HEAD bench.yaml, or tunebench bisect --good v1 --bad HEAD -- 'node bench.js'",
    );
  const target = operands[0]!;
  if (experimentFileProblem(target) === null) return { loaded: loadExperiment(target), fromFile: true };
  const { experiment } = timeExperiment({
    commands: [target],
    scans: [],
    warmup: 0,
    name: f.name ?? 'command',
    ...(f.shell !== undefined ? { shell: f.shell.split(/\s+/) } : {}),
    ...(f.timeout !== undefined ? { timeout: f.timeout } : {}),
  });
  return {
    loaded: { experiment, source: join(repo, 'tunebench bisect'), text: JSON.stringify({ command: target }) },
    fromFile: false,
  };
}

function buildTimeout(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const s = parseDuration(/^\d+(\.\d+)?$/.test(v) ? Number(v) : v);
  if (s === undefined || !(s > 0))
    throw new ConfigError(`--build-timeout: expected a duration such as 600, "90s" or "10m", got ${JSON.stringify(v)}`);
  return s;
}

export function registerBisect(program: Command): void {
  const cmd = program
    .command('bisect')
    .description(
      'find the commit that made a program slower: each step measures a commit against the good one in ' +
        'interleaved, paired rounds with the compare stage’s sequential test (slower, same or undecided)',
    )
    .argument('[target...]', "an experiment file in the repository, or after -- a command line to time ('<cmd>')")
    .option('--good <rev>', 'a commit, branch or tag that is fast (the older one)')
    .option('--bad <rev>', 'a commit, branch or tag that is slower (a descendant of --good)')
    .option('--repo <dir>', 'the git repository (default: the current directory)', '.')
    .option(
      '--build <cmd>',
      'a shell command run in each commit’s worktree before it is measured; a failure skips the commit',
    )
    .option('--build-timeout <duration>', `how long a build may run (default ${BISECT_DEFAULTS.buildTimeoutSeconds} s)`)
    .option('--resume <run-dir>', 'continue a stopped or killed bisection from its journal')
    .option('--min-rounds <n>', `rounds before a step’s first look (default ${BISECT_DEFAULTS.minRounds})`)
    .option(
      '--max-rounds <n>',
      `the most rounds of a step and of the good/bad check (default ${BISECT_DEFAULTS.maxRounds})`,
    )
    .option('--max-steps <n>', 'the most steps (check and repeats included); default: no limit')
    .option('--noise-band <fraction>', `the compare band of the check (default ${BISECT_DEFAULTS.noiseBand})`)
    .option('-S, --shell <shell>', "one-liner: run the command as <shell> -c '<cmd>'")
    .option('--timeout <duration>', 'kill a run after this long (one-liner; an experiment file sets limits.timeout)')
    .option(
      '--executor <kind>',
      "local (every trial here, one at a time) or slurm (each look's rounds one job array); default: the experiment's executor.kind",
    )
    .option('--name <name>', 'one-liner: the run’s name, reports/bisect/<name>/<run-id> (default "command")')
    .option('--no-draw', 'write the chart as a Vega-Lite spec only (do not draw the SVG)');
  addCommonOptions(cmd).addHelpText(
    'after',
    examples(
      "tunebench bisect --good v1.2 --bad HEAD --build 'npm ci && npm run build' bench/nightly.yaml",
      "tunebench bisect --good v1.2 --bad HEAD -- 'node bench.js'",
      'tunebench bisect --resume reports/bisect/nightly/2026-11-27T04-00-00Z-ab12',
    ),
  );
  cmd.action(async (operands: string[], f: BisectFlags, self: Command) => {
    const common = resolveCommon(self.opts());
    const progress = createProgress(progressMode(common));
    const onStep = (e: StepEvent) => {
      if (!common.quiet) process.stderr.write(terminalLines(`${stepLine(e.n, e.step, e.commits)}\n`));
    };
    const done = await withStopSignals((signal) => start(operands, f, { progress, signal, onStep, out: common.out }));
    progress.finish();
    const file = done.file;
    if (common.json) process.stdout.write(`${JSON.stringify(file, null, 2)}\n`);
    else
      process.stdout.write(
        terminalLines(`${answerLines(file).join('\n')}\nrun directory: ${printablePath(done.runDir)}\n`),
      );
    if (file.result.outcome.kind === 'unmeasurable') process.exitCode = EXIT.invalid;
  });
}

function start(
  operands: string[],
  f: BisectFlags,
  o: { progress: ReturnType<typeof createProgress>; signal: AbortSignal; onStep: (e: StepEvent) => void; out: string },
): Promise<BisectDone> {
  const common = { progress: o.progress, signal: o.signal, onStep: o.onStep, drawCharts: f.draw };
  if (f.resume !== undefined) {
    if (f.good !== undefined || f.bad !== undefined || f.executor !== undefined || operands.length > 0)
      throw new ConfigError(
        '--resume continues a bisection as it started: drop --good, --bad, --executor and the target',
      );
    return resumeBisection({ ...common, runDir: f.resume });
  }
  if (f.good === undefined || f.bad === undefined)
    throw new ConfigError('bisect needs --good <rev> and --bad <rev> (or --resume <run-dir>)');
  const repo = resolve(f.repo);
  const { loaded, fromFile } = loadTarget(operands, f, repo);
  if (f.executor !== undefined) {
    if (f.executor !== 'local' && f.executor !== 'slurm')
      throw new ConfigError(`--executor: expected local or slurm, got ${JSON.stringify(f.executor)}`);
    loaded.experiment.executor = { ...loaded.experiment.executor, kind: f.executor };
  }
  const bt = buildTimeout(f.buildTimeout);
  const [minRounds, maxRounds, maxSteps] = [
    count('--min-rounds', f.minRounds, 3),
    count('--max-rounds', f.maxRounds, 3),
    count('--max-steps', f.maxSteps, 1),
  ];
  return runBisection({
    ...common,
    repo,
    good: f.good,
    bad: f.bad,
    loaded,
    fromFile,
    outDir: o.out,
    ...(f.build !== undefined ? { build: f.build } : {}),
    ...(bt !== undefined ? { buildTimeoutSeconds: bt } : {}),
    ...(minRounds !== undefined ? { minRounds } : {}),
    ...(maxRounds !== undefined ? { maxRounds } : {}),
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    ...(f.noiseBand !== undefined ? { noiseBand: parseNoiseBand(f.noiseBand) } : {}),
  });
}
