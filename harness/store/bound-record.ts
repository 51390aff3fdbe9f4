// Keeps a trial record's journal line under MAX_JOURNAL_LINE: a record over it drops its bulkiest
// detail (raw telemetry series, the workload's own report, per-step detail past the first few
// steps, most of the stderr tail) and says so in its notes. Totals and summaries are kept.
import { StoreError } from '../errors.js';
import type { StepSample, TrialRecord } from '../domain/index.js';

/**
 * Bytes of one journal line. A record holds at most MAX_STEP_DETAIL steps of each kind, so a usual
 * one is far below; readers skip a longer line (as damaged) without reading it into memory.
 */
export const MAX_JOURNAL_LINE = 16 * 1024 * 1024;
/** Steps of each kind a shrunk record keeps one by one. */
const SHRUNK_STEP_DETAIL = 100;
/** Characters of stderr a shrunk record keeps. */
const SHRUNK_STDERR = 4096;

/** The record's journal line: as written, or shrunk to fit the bound (with a note saying so). */
export function journalLine(record: TrialRecord): string {
  const line = JSON.stringify(record);
  if (Buffer.byteLength(line) <= MAX_JOURNAL_LINE) return line;
  const note =
    `the record was ${Buffer.byteLength(line)} bytes, over the journal's bound of ${MAX_JOURNAL_LINE} bytes a line: ` +
    `its raw telemetry series, workload_report, per-step detail past the first ${SHRUNK_STEP_DETAIL} steps ` +
    'and most of its stderr tail were dropped (totals, summaries and samples/s are kept)';
  const shrunk: TrialRecord = {
    ...record,
    steps: fold(record.steps),
    ...(record.warmup ? { warmup: fold(record.warmup) } : {}),
    telemetry: {
      ...record.telemetry,
      series: { t: [], cpu_cores: [], per_core: [], rss_bytes: [], processes: [], gpus: [] },
    },
    stderr_tail: record.stderr_tail.slice(-SHRUNK_STDERR),
    notes: [...(record.notes ?? []), note],
  };
  delete shrunk.workload_report;
  const again = JSON.stringify(shrunk);
  if (Buffer.byteLength(again) <= MAX_JOURNAL_LINE) return again;
  throw new StoreError(
    `trial ${record.index}'s record is ${Buffer.byteLength(again)} bytes even without its detail, over the ` +
      `journal's bound of ${MAX_JOURNAL_LINE} bytes a line (its config, reason or notes are that large); ` +
      'this is a tunebench bug: please report it with the experiment file',
  );
}

/** The first SHRUNK_STEP_DETAIL samples, then the rest folded into one (sums and a count). */
function fold(steps: readonly StepSample[]): StepSample[] {
  if (steps.length <= SHRUNK_STEP_DETAIL + 1) return [...steps];
  const rest = steps.slice(SHRUNK_STEP_DETAIL);
  let samples = 0;
  let seconds = 0;
  let wait: number | undefined = 0;
  let count = 0;
  for (const s of rest) {
    samples += s.samples;
    seconds += s.seconds;
    wait = wait === undefined || s.data_wait_seconds === undefined ? undefined : wait + s.data_wait_seconds;
    count += s.count ?? 1;
  }
  const tail: StepSample = { samples, seconds, ...(wait !== undefined ? { data_wait_seconds: wait } : {}), count };
  return [...steps.slice(0, SHRUNK_STEP_DETAIL), tail];
}
