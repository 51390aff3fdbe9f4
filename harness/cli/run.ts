// `tunebench run [experiment]`: parse flags, call runExperiment, print the result.
import { warningText } from '../report/warnings.js';
import { noteText } from '../report/notes.js';
import type { Command } from 'commander';
import { createProgress, terminalLines } from './progress.js';
import { runExperiment } from '../engine/run-experiment.js';
import { findUnfinished, resumeExperiment } from '../engine/resume.js';
import { ConfigError, EXIT, StageFailedError } from '../errors.js';
import { stageWarnings } from '../report/run-warnings.js';
import { stageFailureSentence } from '../report/stage-failure.js';
import { formatSeconds } from '../experiment/units.js';
import { readFileSync } from 'node:fs';
import { failureCause, type StageFailure, type TrialRecord } from '../domain/index.js';
import {
  addCommonOptions,
  appendStepSummary,
  DEFAULTS,
  examples,
  progressMode,
  resolveCommon,
  type CommonOptions,
} from './common.js';
import { withStopSignals } from './signals.js';
import { readRunDir, type RunResult } from '../experiment/run-file.js';
import { loadExperiment } from '../engine/load.js';
import { STAGE_KIND_MODULES } from '../engine/kinds/index.js';
import { kindAnswer } from '../report/kinds.js';
import { answerLines, type StageAnswer } from '../report/answers.js';

export function registerRun(program: Command): void {
  addCommonOptions(
    program
      .command('run')
      .description(`run an experiment file (YAML or JSON); default ${DEFAULTS.experiment}`)
      .argument('[experiment]', 'experiment file', DEFAULTS.experiment)
      .option(
        '--resume <run-dir>',
        'continue a stopped or killed run: its completed trials are replayed from the journal, not run again',
      )
      .option(
        '--executor <kind>',
        "local (every trial here, one at a time) or slurm (job arrays); default: the experiment's executor.kind",
      )
      .option('--no-wait', 'slurm: submit and return; gather the results later with tunebench collect <run-dir>')
      .option(
        '--resume-unfinished',
        "if this experiment's newest run under --out did not finish, resume it; " +
          'else start a new run (for nightly jobs and requeued SLURM jobs)',
      )
      .addHelpText(
        'after',
        examples(
          'tunebench run experiments/default.yaml',
          'tunebench run experiments/onnx-pipeline.yaml --out reports --json > result.json',
          'tunebench run --resume reports/default/<run-id>',
        ),
      ),
  ).action(async (experiment: string, raw: RunCliFlags, cmd: Command) => {
    const flags = runFlags(experiment, raw, cmd);
    const result = await runOrResume(flags);
    printResult(result, flags.common);
  });
}

/** The flags of `tunebench run`, checked. */
interface RunFlags {
  experiment: string;
  common: Readonly<CommonOptions>;
  resume: string | undefined;
  executor: 'local' | 'slurm' | undefined;
  noWait: boolean;
  resumeUnfinished: boolean;
}

/** What commander gives the run action. */
type RunCliFlags = {
  out?: string;
  json?: boolean;
  quiet?: boolean;
  resume?: string;
  executor?: string;
  /** false with --no-wait. */
  wait?: boolean;
  resumeUnfinished?: boolean;
};

function runFlags(experiment: string, raw: RunCliFlags, cmd: Command): RunFlags {
  const common = resolveCommon(raw);
  const resume = raw.resume;
  if (resume !== undefined && cmd.args.length > 0) {
    throw new ConfigError(
      'give either an experiment file or --resume <run-dir>, not both: ' +
        'a resumed run continues the experiment stored in its run.json',
    );
  }
  const kind = raw.executor;
  if (kind !== undefined && kind !== 'local' && kind !== 'slurm')
    throw new ConfigError(`--executor: expected local or slurm, got ${JSON.stringify(kind)}`);
  if (kind !== undefined && resume !== undefined)
    throw new ConfigError(
      '--executor cannot change a resumed run: it continues with the executor it started with (see its run.json)',
    );
  return {
    experiment,
    common,
    resume,
    executor: kind,
    noWait: raw.wait === false,
    resumeUnfinished: raw.resumeUnfinished === true,
  };
}

/** Runs the experiment, or resumes a run (the one --resume names, or the unfinished one it finds). */
async function runOrResume(f: RunFlags): Promise<RunResult> {
  // The file is read and validated before the stop signals are taken over: until a run directory
  // exists there is nothing to clean up, so a signal ends tunebench at once, even inside a long parse.
  const loaded = f.resume === undefined ? loadExperiment(f.experiment) : undefined;
  const progress = createProgress(progressMode(f.common));
  let resume = f.resume;
  if (loaded && f.resumeUnfinished) {
    const found = findUnfinished(f.common.out, { name: loaded.experiment.name, file: loaded.source });
    if (found) {
      progress.note(`--resume-unfinished: resuming ${found}`);
      resume = found;
    }
  }
  const { noWait } = f;
  return withStopSignals((signal) =>
    resume !== undefined
      ? resumeExperiment({ runDir: resume, progress, signal, noWait })
      : runExperiment({
          experimentPath: f.experiment,
          ...(loaded ? { loaded } : {}),
          outDir: f.common.out,
          progress,
          signal,
          noWait,
          ...(f.executor ? { executor: f.executor } : {}),
        }),
  ).finally(() => progress.finish());
}

/**
 * Reports the run: the exit code of stages that failed, the step summary, the result on stdout; throws
 * StageFailedError when a stage failed at a value an earlier stage chose.
 */
function printResult(result: RunResult, o: Readonly<CommonOptions>): void {
  // A stage that failed at the batch an earlier stage chose is the harness's answer failing (exit 1).
  const failures = result.stage_failures ?? [];
  // The journal is read once, and only when something printed needs it.
  let records: readonly TrialRecord[] | undefined;
  const recordsOf = () => (records ??= readRunDir(result.run_dir).records);
  reportInvalidStages(result, failures, recordsOf);
  const failedBy = (): StageFailedError =>
    new StageFailedError(
      `${failures.map(stageFailureSentence).join('; ')} (see ${result.files['summary'] ?? result.run_dir})`,
    );
  if (process.env['GITHUB_STEP_SUMMARY']) appendStepSummary(readFileSync(result.files['summary']!, 'utf8'));
  // --quiet hides the progress, never the result.
  const answers = result.stages.map((s) => kindAnswer(STAGE_KIND_MODULES, s));
  if (o.json) process.stdout.write(`${JSON.stringify({ ...result, answers }, null, 2)}\n`);
  else process.stdout.write(terminalLines(headline(result, answers, failures.length > 0, recordsOf())));
  if (failures.length > 0) throw failedBy();
}

/** Stages whose workload failed before any config ran: the user's to fix, reported as invalid input. */
function reportInvalidStages(
  result: RunResult,
  failures: readonly StageFailure[],
  recordsOf: () => readonly TrialRecord[],
): void {
  const invalid = result.failed_stages.filter((s) => !failures.some((f) => f.stage === s));
  if (invalid.length === 0) return;
  // A workload that fails before any config runs is the user's to fix: report it as invalid input.
  process.exitCode = EXIT.invalid;
  const why = result.stages.filter((s) => invalid.includes(s.name)).map((s) => whyFailed(s, recordsOf()));
  process.stderr.write(
    terminalLines(
      `tunebench: invalid input: the workload failed in stage ${invalid.join(', ')}: ` +
        `${why.join(' ')} (see ${result.files['summary']})\n`,
    ),
  );
}

/** Why a stage failed: its notes, or (a stage whose notes do not say, such as a claim) its first failed trial. */
function whyFailed(stage: RunResult['stages'][number], records: readonly TrialRecord[]): string {
  if (stage.notes.length > 0) return stage.notes.map(noteText).join(' ');
  const first = records.find((r) => r.stage === stage.name && r.outcome !== 'ok');
  return first ? `trial ${first.index}: ${first.outcome}: ${failureCause(first)}` : '';
}

/** What a finished run prints for a person, before terminal escaping. */
function headline(
  result: RunResult,
  answers: readonly StageAnswer[],
  harnessFailed: boolean,
  records: readonly TrialRecord[],
): string {
  // A run whose stages chose nothing (claims check an effect; a failed search finds none) has no config to
  // name: its settings are the experiment's own, not a choice.
  const choseSomething = result.stages.some((s) => Object.keys(s.chosen).length > 0);
  const chosen = choseSomething
    ? Object.entries(result.chosen)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(' ')
    : 'nothing (no stage chose a setting)';
  // The headline says what the exit status says: a run with failed stages exits 2.
  const ended =
    result.failed_stages.length > 0
      ? `finished with failed stages (${result.failed_stages.join(', ')}; ` +
        `exit ${harnessFailed ? EXIT.harness : EXIT.invalid})`
      : 'finished';
  // Chosen values and warnings carry text from the workload and the experiment file: escaped for the terminal.
  return [
    `tunebench: ${result.experiment} ${ended} in ${formatSeconds(result.wall_seconds)}: ` +
      `${result.trials.total} trials` +
      `${result.trials.replayed ? ` (${result.trials.replayed} replayed from the journal)` : ''}`,
    ...[...result.warnings.map(warningText), ...stageWarnings(result, records)].map((w) => `warning: ${w}`),
    // Each stage's answer (a claim's verdict, a compare's arms, the max), then what was chosen: last, where a
    // person looks.
    ...answerLines(answers).map((a) => `answer: ${a}`),
    `chosen: ${chosen || '(nothing)'}`,
    `run directory: ${result.run_dir}`,
    `summary: ${result.files['summary']}`,
    `report: ${result.files['report']}`,
    '',
  ].join('\n');
}
