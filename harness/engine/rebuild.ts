// `tunebench report`: the figures of a run come from its journal, not from run.json. The stages
// replay the journal (as a resume does, running no trial), and where run.json's stored result says
// otherwise (an edited file), the journal wins and a warning says what disagreed.
import { StoreError } from '../errors.js';
import { Journal, JOURNAL_FILE } from '../store/journal.js';
import { experimentOfRun } from './resume.js';
import { runContext, runStages, type RunCursor } from './run-experiment.js';
import { thawed } from '../util/frozen.js';
import type { Evidence } from '../domain/index.js';
import { initialState } from './revisions.js';
import { finalConfirmations } from './stages/final-confirm.js';
import type { Executor } from '../executors/executor.js';
import { SILENT_PROGRESS } from '../executors/progress.js';
import { type TrialRecord } from '../domain/index.js';
import type { StageOutcome } from '../experiment/schema.js';
import { runJsonSchema, type RunJson, type RunResult } from '../experiment/run-file.js';

/** An executor for a replay: every trial must come from the journal. */
function journalOnly(path: string): Executor {
  const refuse = (index: number): never => {
    throw new StoreError(
      `${path} ends before trial ${index}, which the run's stages need: the journal was cut short ` +
        'after the run finished, so its figures cannot be derived from it',
    );
  };
  return { kind: 'local', plan: async () => undefined, run: async (index) => refuse(index) };
}

export interface Rebuilt {
  /** run.json with the stages, chosen config and evidence derived from the journal. */
  run: RunJson;
  /** Set when run.json's stored result disagreed with the journal: what disagreed, for the user. */
  warning?: string;
}

/** Derives a finished (or partial) run's result from its journal; run.json supplies the experiment only. */
export async function rebuildFromJournal(
  run: RunJson,
  records: readonly TrialRecord[],
  journalPath: string,
): Promise<Rebuilt> {
  const stored = run.result;
  if (!stored) return { run };
  let derived: RunResult;
  try {
    derived = await replayResult(run, stored, records, journalPath);
  } catch (error) {
    // A run of another tunebench version may not retrace (its searches chose other trials): its own
    // figures are all there is, and the user is told that they were not checked.
    const warning =
      `the figures in run.json could not be checked against ${JOURNAL_FILE}, so the report shows them as ` +
      `stored: the stages do not retrace this journal (${(error as Error).message})`;
    return { run, warning };
  }
  const disagreements = (['stages', 'chosen', 'evidence', 'trials'] as const).filter(
    (k) => JSON.stringify(stored[k]) !== JSON.stringify(derived[k]),
  );
  if (disagreements.length === 0) return { run };
  const warning =
    `run.json disagrees with ${JOURNAL_FILE} on ${disagreements.join(', ')} (it was edited or damaged after the run): ` +
    `this report shows the figures derived from ${JOURNAL_FILE}`;
  return {
    run: {
      ...run,
      result: { ...derived, warnings: [...stored.warnings, { kind: 'note', source: 'rebuild', text: warning }] },
    },
    warning,
  };
}

/** The stored result with its stages, chosen config, evidence and trial counts replayed from the journal. */
async function replayResult(
  run: RunJson,
  stored: RunResult,
  records: readonly TrialRecord[],
  journalPath: string,
): Promise<RunResult> {
  const { experiment, workload } = experimentOfRun(run);
  const context = runContext(
    {
      experiment,
      workload,
      env: run.environment,
      progress: SILENT_PROGRESS,
      replay: records,
      executor: journalOnly(journalPath),
      // Nothing is appended: the journal is read, never written.
      journalReadOnly: true,
    },
    new Journal(journalPath),
    '',
  );
  const cursor: RunCursor = { state: initialState(context.initialConfig), current: '' };
  try {
    // A partial run replays only the stages that finished.
    const until = stored.stopped ? stored.stages.length - 1 : Infinity;
    await runStages(context, cursor, until);
    if (!stored.stopped) cursor.state = await finalConfirmations(context, cursor.state);
  } finally {
    context.trial.warm?.close();
  }
  const { state } = cursor;
  const result: RunResult = {
    ...stored,
    stages: thawed<StageOutcome[]>(state.outcomes),
    chosen: stored.stopped ? stored.chosen : { ...state.config },
    evidence: thawed<Record<string, Evidence>>(state.evidence),
    trials: { ...stored.trials, total: records.length, by_outcome: countOutcomes(stored, records) },
  };
  // As run.json would hold it (written as JSON, read through its schema), so that the two compare.
  return runJsonSchema.parse(JSON.parse(JSON.stringify({ ...run, result }))).result!;
}

function countOutcomes(stored: RunResult, records: readonly TrialRecord[]): RunResult['trials']['by_outcome'] {
  const counts = Object.fromEntries(Object.keys(stored.trials.by_outcome).map((o) => [o, 0])) as Record<string, number>;
  for (const r of records) counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
  return counts;
}
