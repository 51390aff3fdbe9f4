// The regression alarms waiting for a confirmation: run them, record what they found, and analyze the
// history again with them (the confirmation itself is in confirm.ts).
import { dirname, join } from 'node:path';
import { StoppedError } from '../errors.js';
import type { Progress } from '../executors/progress.js';
import { experimentDirName } from '../store/run-dir.js';
import { confirmAlarms } from './confirm.js';
import type { RunEntry } from './index.js';
import {
  analyzeHistory,
  appendConfirmations,
  confirmationRoots,
  seriesDecides,
  type ExperimentHistory,
  type HistoryOptions,
} from './trend.js';

/** What confirmations need from the command that runs them. */
export interface ConfirmWiring {
  /** The history's output folder: confirmations run under <outRoot>/<experiment>/confirm. */
  outRoot: string;
  /** A fresh progress display for one experiment's confirmations; it is finished after them. */
  progress: () => Progress;
  /** Runs `work` with a signal that a stop request (SIGINT, SIGTERM, ...) aborts. */
  stoppable: <T>(work: (signal: AbortSignal) => Promise<T>) => Promise<T>;
}

/**
 * The history of every experiment; with `confirm`, the regression alarms waiting for a confirmation are
 * confirmed first and the history analyzed again with what they found.
 */
export async function analyzeConfirmed(
  runs: readonly RunEntry[],
  opts: HistoryOptions & { experiment?: string },
  confirm: ConfirmWiring | null,
): Promise<ExperimentHistory[]> {
  const histories = analyzeHistory(runs, opts);
  if (confirm && (await confirmPending(histories, runs, confirm))) return analyzeHistory(runs, opts);
  return histories;
}

/**
 * Runs the confirmations of every regression alarm waiting for one and records them in
 * <reports>/<experiment>/confirmations.json; true when any ran (the history is then analyzed again).
 */
export async function confirmPending(
  histories: readonly ExperimentHistory[],
  runs: readonly RunEntry[],
  wiring: ConfirmWiring,
): Promise<boolean> {
  let ran = false;
  for (const h of histories) {
    if (await confirmExperiment(h, runs, wiring)) ran = true;
  }
  return ran;
}

/** Confirms one experiment's pending alarms; true when there were any. */
async function confirmExperiment(
  h: ExperimentHistory,
  runs: readonly RunEntry[],
  wiring: ConfirmWiring,
): Promise<boolean> {
  const g = h.gate;
  if (!g || !seriesDecides(g)) return false;
  const pending = g.series!.metrics.filter((m) => m.pending);
  if (pending.length === 0) return false;
  const latest = runs.find((r) => r.run_id === g.latest.run_id && r.dir === g.latest.dir)!;
  // The reference level's latest night: its config is measured beside tonight's.
  const refId = pending[0]!.alarm?.reference_to;
  const reference =
    runs.find((r) => r.run_id === refId && r.experiment === h.experiment && r.env_key === latest.env_key) ?? null;
  const progress = wiring.progress();
  const outcome = await wiring
    .stoppable((signal) =>
      confirmAlarms(latest, reference, pending, {
        outDir: join(wiring.outRoot, experimentDirName(h.experiment), 'confirm'),
        progress,
        signal,
        minDrop: g.series!.min_drop,
      }),
    )
    .finally(() => progress.finish());
  // A confirmation cut short by a signal is not evidence either way: nothing is recorded, and the
  // next history runs it again.
  if (outcome.kind === 'stopped') throw new StoppedError(`${outcome.reason}; run tunebench history again to confirm`);
  appendConfirmations(
    dirname(latest.dir),
    outcome.confirmations,
    confirmationRoots(dirname(latest.dir), wiring.outRoot),
  );
  return true;
}
