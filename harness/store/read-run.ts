// Reads a run directory back: run.json and the journal, each through its schema, for reports,
// compares and the history.
import { join } from 'node:path';
import type { z } from 'zod';
import type { TrialRecord } from '../domain/index.js';
import { JOURNAL_FILE, readJournal, requireJournalFormat } from './journal.js';
import { readRunJsonThrough } from './run-dir.js';

/**
 * A run directory read back: run.json through `schema` (experiment/run-file.ts binds it) and the journal
 * through its own, with a warning for each gap in the trials.
 */
export function readRunDirThrough<S extends z.ZodType>(
  schema: S,
  dir: string,
): { run: z.output<S>; records: TrialRecord[]; warnings: string[] } {
  const run = readRunJsonThrough(schema, dir, `the trials in ${JOURNAL_FILE} are kept apart and may be intact`);
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
