// The append-only trial journal (trials.jsonl): each record is flushed to disk before the next trial starts.
// Each line is bounded (bound-record.ts) and the file is read line by line, so any journal stays readable.
import { closeSync, existsSync, fstatSync, fdatasyncSync, ftruncateSync, openSync, statSync } from 'node:fs';
import { ConfigError, StoreError } from '../errors.js';
import { describeWriteError, writeAll, writeFileAtomic } from './atomic.js';
import { journalLine, MAX_JOURNAL_LINE } from './bound-record.js';
import { forEachLine } from './lines.js';
import { READABLE_RECORD_VERSIONS, trialRecordSchema, versionList, type TrialRecord } from '../domain/index.js';
import { CheckedFileError, parseCheckedLine } from '../util/checked-json.js';

export const JOURNAL_FILE = 'trials.jsonl';
export { MAX_JOURNAL_LINE };

export class Journal {
  /** The lines this journal must hold (read at first use, then every line appended). */
  private known: string[] | null = null;
  /** The file as it was after our last write: a different file, or another size, means someone else changed it. */
  private stamp: { dev: number; ino: number; size: number } | null = null;
  /** What happened to the journal behind tunebench's back (deleted, replaced, truncated), each restored. */
  readonly incidents: string[] = [];

  constructor(readonly path: string) {}

  private load(): string[] {
    if (this.known) return this.known;
    const known: string[] = [];
    // A line past the bound was not written by tunebench: verify() restores the file without it.
    if (existsSync(this.path))
      forEachLine(this.path, MAX_JOURNAL_LINE, (l) => {
        if (l.kind === 'text' && l.text.length > 0) known.push(l.text);
      });
    this.known = known;
    this.stamp = this.statOf();
    return this.known;
  }

  private statOf(): { dev: number; ino: number; size: number } | null {
    try {
      const st = statSync(this.path);
      return { dev: st.dev, ino: st.ino, size: st.size };
    } catch {
      return null;
    }
  }

  /**
   * Checks that the journal is the file tunebench wrote and holds what it wrote (a workload, a
   * clean-up script or a person may delete, replace or truncate it mid-run). When it does not, the
   * journal is restored from what tunebench holds in memory, and the incident is kept for the run's
   * warnings. `when` names the moment, e.g. "before trial 12".
   */
  verify(when: string): void {
    const known = this.load();
    const now = this.statOf();
    const was = this.stamp;
    if (was === null && now === null) return;
    if (was !== null && now !== null && now.dev === was.dev && now.ino === was.ino && now.size === was.size) return;
    const what =
      now === null
        ? 'was deleted'
        : was === null
          ? 'appeared from elsewhere'
          : now.ino !== was.ino || now.dev !== was.dev
            ? 'was replaced by another file'
            : now.size < was.size
              ? 'was truncated'
              : 'was written to by something else';
    this.incidents.push(
      `the journal ${this.path} ${what} ${when}; tunebench restored its ${known.length} record(s) from memory`,
    );
    writeFileAtomic(this.path, known.map((l) => `${l}\n`).join(''));
    this.stamp = this.statOf();
  }

  /**
   * Appends one line and flushes it. When the write fails (a full disk), the file is cut back to
   * its previous length, so the journal never ends in half a record because of us.
   */
  append(record: TrialRecord): void {
    this.verify(`before trial ${record.index} was recorded`);
    const line = journalLine(record);
    let fd: number | undefined;
    let size = 0;
    try {
      fd = openSync(this.path, 'a');
      size = fstatSync(fd).size;
      writeAll(fd, Buffer.from(`${line}\n`));
      // The data and the length that finds it; the timestamps need not reach the disk.
      fdatasyncSync(fd);
      const st = fstatSync(fd);
      this.stamp = { dev: st.dev, ino: st.ino, size: st.size };
      this.known!.push(line);
    } catch (error) {
      if (fd !== undefined) {
        try {
          ftruncateSync(fd, size);
        } catch {
          // The cut-back is best effort: a half line is still tolerated by readJournal.
        }
      }
      throw new StoreError(
        `could not append trial ${record.index} to the journal ${this.path}: ${describeWriteError(error)}`,
        { cause: error },
      );
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  /**
   * Replaces the journal with the records of `read` (atomically), each line exactly as it was
   * written: used to drop a truncated last line before resuming.
   */
  rewrite(read: Pick<JournalRead, 'lines'>): void {
    const lines = [...read.lines];
    writeFileAtomic(this.path, lines.map((l) => `${l}\n`).join(''));
    this.known = lines;
    this.stamp = this.statOf();
  }
}

export interface JournalRead {
  records: TrialRecord[];
  /** The line of each record in `records`, as written (rewrites keep it byte for byte). */
  lines: string[];
  /** A last line cut short (the harness was killed mid-write); it is ignored. */
  truncatedTail: boolean;
  /** Malformed lines other than the last one (not JSON, or not a trial record): the journal was edited or corrupted. */
  badLines: number[];
  /** For each bad line that is JSON but not a trial record: file, line and the field that is wrong. */
  problems: string[];
  /** Records of another format version (written by another tunebench); not in `records`. */
  unsupported: { line: number; version: unknown }[];
}

/** Refuses a journal that holds records of another format version (written by another tunebench). */
export function requireJournalFormat(read: JournalRead, path: string, prefix: string, advice: string): void {
  const foreign = read.unsupported[0];
  if (foreign) {
    throw new ConfigError(
      `${prefix}${path} line ${foreign.line} is a trial record of format ` +
        `${JSON.stringify(foreign.version ?? null)}, and this tunebench reads formats ` +
        `${versionList(READABLE_RECORD_VERSIONS)}; ${advice}`,
    );
  }
}

export function readJournal(path: string): JournalRead {
  const read: JournalRead = {
    records: [],
    lines: [],
    truncatedTail: false,
    badLines: [],
    problems: [],
    unsupported: [],
  };
  if (!existsSync(path)) return read;
  forEachLine(path, MAX_JOURNAL_LINE, (line) => {
    if (line.kind === 'too-long') {
      if (line.last && !line.endsClean) read.truncatedTail = true;
      else {
        read.badLines.push(line.number);
        read.problems.push(
          `${path} line ${line.number} is longer than the journal's bound of ${MAX_JOURNAL_LINE} bytes ` +
            `(${line.bytes} bytes): tunebench never writes one, so the journal was edited or damaged; the line is skipped`,
        );
      }
      return;
    }
    readLine(read, path, line.text, line.number, line.last && !line.endsClean);
  });
  return read;
}

function readLine(read: JournalRead, path: string, line: string, number: number, cutShort: boolean): void {
  if (!line.trim()) return;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    if (cutShort) read.truncatedTail = true;
    else read.badLines.push(number);
    return;
  }
  const version = value !== null && typeof value === 'object' ? (value as { v?: unknown }).v : undefined;
  if (typeof version !== 'number' || !READABLE_RECORD_VERSIONS.includes(version)) {
    read.unsupported.push({ line: number, version });
    return;
  }
  try {
    read.records.push(
      parseCheckedLine(trialRecordSchema, line, path, number, 'a trial record', 'the journal was edited or damaged'),
    );
    read.lines.push(line);
  } catch (error) {
    if (!(error instanceof CheckedFileError)) throw error;
    read.badLines.push(number);
    read.problems.push(error.message);
  }
}
