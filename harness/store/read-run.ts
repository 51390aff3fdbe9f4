// Reads a run directory back: run.json and the journal, each through its schema, for reports,
// compares and the history.
import { join } from 'node:path';
import type { RunJson, TrialRecord } from '../domain/index.js';
import { JOURNAL_FILE, readJournal, requireJournalFormat } from './journal.js';
import { readRunJson } from './run-dir.js';

/**
 * Reads a finished or partial run directory (run.json and the journal, both checked), with a clear
 * error for each way it can be unusable.
 */
export function readRunDir(dir: string): { run: RunJson; records: TrialRecord[]; warnings: string[] } {
  const run = readRunJson(dir, `the trials in ${JOURNAL_FILE} are kept apart and may be intact`);
  const journal = readJournal(join(dir, JOURNAL_FILE));
  requireJournalFormat(journal, join(dir, JOURNAL_FILE), '', 'use the tunebench version that wrote the run');
  const warnings: string[] = [];
  if (journal.truncatedTail)
    warnings.push(
      `the last line of ${JOURNAL_FILE} was cut short (the harness was killed while writing it) and is ignored`,
    );
  if (journal.badLines.length > 0)
    warnings.push(
      `${JOURNAL_FILE}: lines ${journal.badLines.join(', ')} are not trial records (not JSON, or damaged) ` +
        `and are ignored${journal.problems[0] ? ` (${journal.problems[0]})` : ''}`,
    );
  // Trials are journaled in order from 0: anything else means records were removed or the file was swapped.
  const broken = journal.records.findIndex((r, i) => r.index !== i);
  if (broken >= 0)
    warnings.push(
      `${JOURNAL_FILE}: the trial indices ` +
        (broken === 0
          ? `start at ${journal.records[0]!.index}, not 0`
          : `jump from ${journal.records[broken - 1]!.index} to ${journal.records[broken]!.index} ` +
            `at line ${broken + 1}`) +
        ': trials are missing, so this report does not show the whole run',
    );
  return { run, records: journal.records, warnings };
}
