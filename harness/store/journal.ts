// The append-only trial journal (trials.jsonl): each record is flushed to disk before the next trial starts.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync } from 'node:fs';
import { ConfigError, StoreError } from '../errors.js';
import type { TrialRecord } from '../trial/record.js';
import { describeWriteError, writeAll, writeFileAtomic } from './atomic.js';

export const JOURNAL_FILE = 'trials.jsonl';
/** The record format this tunebench writes and reads (TrialRecord.v). */
export const JOURNAL_VERSION = 1;

export class Journal {
  constructor(readonly path: string) {}

  /**
   * Appends one line and flushes it. When the write fails (a full disk), the file is cut back to
   * its previous length, so the journal never ends in half a record because of us.
   */
  append(record: TrialRecord): void {
    let fd: number | undefined;
    let size = 0;
    try {
      fd = openSync(this.path, 'a');
      size = fstatSync(fd).size;
      writeAll(fd, Buffer.from(`${JSON.stringify(record)}\n`));
      fsyncSync(fd);
    } catch (error) {
      if (fd !== undefined) {
        try {
          ftruncateSync(fd, size);
        } catch {
          // The cut-back is best effort: a half line is still tolerated by readJournal.
        }
      }
      throw new StoreError(`could not append trial ${record.index} to the journal ${this.path}: ${describeWriteError(error)}`, { cause: error });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /** Replaces the journal with these records (atomically): used to drop a truncated last line before resuming. */
  rewrite(records: readonly TrialRecord[]): void {
    writeFileAtomic(this.path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  }
}

export interface JournalRead {
  records: TrialRecord[];
  /** A last line cut short (the harness was killed mid-write); it is ignored. */
  truncatedTail: boolean;
  /** Malformed lines other than the last one: the journal was edited or corrupted. */
  badLines: number[];
  /** Records of another format version (written by another tunebench); not in `records`. */
  unsupported: { line: number; version: unknown }[];
}

/** Refuses a journal that holds records of another format version (written by another tunebench). */
export function requireJournalFormat(read: JournalRead, path: string, prefix: string, advice: string): void {
  const foreign = read.unsupported[0];
  if (foreign) {
    throw new ConfigError(`${prefix}${path} line ${foreign.line} is a trial record of format ${JSON.stringify(foreign.version ?? null)}, and this tunebench reads format ${JOURNAL_VERSION}; ${advice}`);
  }
}

export function readJournal(path: string): JournalRead {
  if (!existsSync(path)) return { records: [], truncatedTail: false, badLines: [], unsupported: [] };
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const endsClean = text.endsWith('\n') || text.length === 0;
  const records: TrialRecord[] = [];
  const badLines: number[] = [];
  const unsupported: { line: number; version: unknown }[] = [];
  let truncatedTail = false;
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let record: TrialRecord;
    try {
      record = JSON.parse(line) as TrialRecord;
    } catch {
      if (i === lines.length - 1 && !endsClean) truncatedTail = true;
      else badLines.push(i + 1);
      return;
    }
    if (record === null || typeof record !== 'object' || record.v !== JOURNAL_VERSION) unsupported.push({ line: i + 1, version: (record as { v?: unknown } | null)?.v });
    else records.push(record);
  });
  return { records, truncatedTail, badLines, unsupported };
}
