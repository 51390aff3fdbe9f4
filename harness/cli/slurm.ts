// The SLURM side of the CLI: `collect` (the coordinator again, later), and the two commands that
// SLURM jobs run: `trial` (one array task) and `stage-worker` (a max-batch stage in one allocation).
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { createProgress, terminalLines } from './progress.js';
import { STAGE_KIND_MODULES } from '../engine/kinds/index.js';
import { kindAnswer } from '../report/kinds.js';
import { answerLines } from '../report/answers.js';
import { experimentOfRun, resumeExperiment } from '../engine/resume.js';
import { runContext, runStages } from '../engine/run-experiment.js';
import { initialState } from '../engine/revisions.js';
import type { RunContext } from '../engine/context.js';
import { runArrayTask, runStageWorker } from '../executors/slurm/worker.js';
import { ConfigError } from '../errors.js';
import { examples, progressMode, resolveCommon } from './common.js';
import { withStopSignals } from './signals.js';
import { isFinished } from '../domain/index.js';
import { readRunJson } from '../experiment/run-file.js';

const int = (name: string, value: string | undefined): number => {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < 0)
    throw new ConfigError(`${name}: expected a whole number >= 0, got ${JSON.stringify(value ?? null)}`);
  return n;
};

/** The engine's operations that SLURM jobs run: the workers sit in executors/, below the engine. */
const engine = {
  experimentOfRun,
  runContext,
  runStages: (run: RunContext, until: number) =>
    runStages(run, { state: initialState(run.initialConfig), current: '' }, until),
};

export function registerSlurm(program: Command): void {
  program
    .command('collect')
    .description(
      'gather the results of a SLURM run (after --no-wait, or a coordinator that was killed) ' +
        'and go on with it; idempotent',
    )
    .argument('<run-dir>', 'the run directory')
    .option('--no-wait', 'submit what is next and return instead of waiting')
    .option('--quiet', 'no progress output', false)
    .addHelpText(
      'after',
      examples(
        'tunebench run experiments/default.yaml --executor slurm --no-wait',
        'tunebench collect reports/default/<run-id>',
      ),
    )
    .action(async (dirArg: string, raw: { wait: boolean; quiet: boolean }) => {
      const dir = resolve(dirArg);
      const run = readRunJson(dir, 'a SLURM run cannot be collected without it; start a new run');
      if (isFinished(run)) {
        process.stdout.write(
          `${dir}: already collected; report: ${run.result?.files['report'] ?? join(dir, 'report.html')}\n`,
        );
        return;
      }
      const o = resolveCommon({ quiet: raw.quiet });
      const progress = createProgress(progressMode(o));
      const result = await withStopSignals((signal) =>
        resumeExperiment({ runDir: dir, progress, signal, noWait: !raw.wait }),
      ).finally(() => progress.finish());
      const answers = answerLines(result.stages.map((s) => kindAnswer(STAGE_KIND_MODULES, s)));
      process.stdout.write(terminalLines(answers.map((a) => `answer: ${a}\n`).join('')));
      process.stdout.write(
        `tunebench: ${result.experiment} collected: ${result.trials.total} trials; chosen: ${Object.entries(
          result.chosen,
        )
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' ')}\nreport: ${result.files['report']}\n`,
      );
    });

  program
    .command('trial')
    .description('(run by SLURM array tasks) run one planned trial of a run directory and write its record')
    .requiredOption('--run <dir>', 'the shared run directory')
    .requiredOption('--batch <id>', 'the batch, e.g. b12')
    .option('--offset <n>', 'task number of array index 0', '0')
    .option('--index <i>', 'array index (default $SLURM_ARRAY_TASK_ID)')
    .addHelpText('after', examples('tunebench trial --run reports/default/<run-id> --batch b3 --offset 0 --index 1'))
    .action(async (o: { run: string; batch: string; offset: string; index?: string }) => {
      const index = int('--index', o.index ?? process.env['SLURM_ARRAY_TASK_ID']);
      const path = await withStopSignals((signal) =>
        runArrayTask({
          runDir: resolve(o.run),
          batch: o.batch,
          offset: int('--offset', o.offset),
          index,
          engine,
          signal,
        }),
      );
      process.stdout.write(`trial record: ${path}\n`);
    });

  program
    .command('stage-worker')
    .description('(run inside a SLURM allocation) run one max-batch stage of a run directory here')
    .requiredOption('--run <dir>', 'the shared run directory')
    .requiredOption('--stage <k>', 'the stage number, from 0')
    .addHelpText('after', examples('tunebench stage-worker --run reports/default/<run-id> --stage 0'))
    .action(async (o: { run: string; stage: string }) => {
      const progress = createProgress('plain');
      const dir = await withStopSignals((signal) =>
        runStageWorker({ runDir: resolve(o.run), stage: int('--stage', o.stage), progress, engine, signal }),
      ).finally(() => progress.finish());
      process.stdout.write(`stage journal: ${join(dir, 'trials.jsonl')}\n`);
    });
}
