// The append-only trial journal (trials.jsonl): each record is flushed to disk before the next trial starts.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { StoreError } from '../errors.js';
import type { TrialRecord } from '../trial/record.js';

export const JOURNAL_FILE = 'trials.jsonl';

export class Journal {
  constructor(readonly path: string) {}

  append(record: TrialRecord): void {
    try {
      const fd = openSync(this.path, 'a');
      try {
        writeSync(fd, `${JSON.stringify(record)}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      throw new StoreError(`could not append to the journal ${this.path}: ${(error as Error).message}`, { cause: error });
    }
  }
}

export interface JournalRead {
  records: TrialRecord[];
  /** A last line cut short (the harness was killed mid-write); it is ignored. */
  truncatedTail: boolean;
  /** Malformed lines other than the last one: the journal was edited or corrupted. */
  badLines: number[];
}

export function readJournal(path: string): JournalRead {
  if (!existsSync(path)) return { records: [], truncatedTail: false, badLines: [] };
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const endsClean = text.endsWith('\n') || text.length === 0;
  const records: TrialRecord[] = [];
  const badLines: number[] = [];
  let truncatedTail = false;
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    try {
      records.push(JSON.parse(line) as TrialRecord);
    } catch {
      if (i === lines.length - 1 && !endsClean) truncatedTail = true;
      else badLines.push(i + 1);
    }
  });
  return { records, truncatedTail, badLines };
}
