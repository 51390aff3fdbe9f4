// The append-only trial journal (trials.jsonl): each record is flushed to disk before the next trial starts.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, statSync } from 'node:fs';
import { ConfigError, StoreError } from '../errors.js';
import { describeWriteError, writeAll, writeFileAtomic } from './atomic.js';
import { RECORD_VERSION, trialRecordSchema, type TrialRecord } from '../domain/index.js';
import { CheckedFileError, parseCheckedLine } from '../util/checked-json.js';

export const JOURNAL_FILE = 'trials.jsonl';
/** The record format this tunebench writes and reads (TrialRecord.v). */
export const JOURNAL_VERSION = RECORD_VERSION;

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
    this.known = existsSync(this.path)
      ? readFileSync(this.path, 'utf8')
          .split('\n')
          .filter((l) => l.length > 0)
      : [];
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
    const line = JSON.stringify(record);
    let fd: number | undefined;
    let size = 0;
    try {
      fd = openSync(this.path, 'a');
      size = fstatSync(fd).size;
      writeAll(fd, Buffer.from(`${line}\n`));
      fsyncSync(fd);
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
        `${JSON.stringify(foreign.version ?? null)}, and this tunebench reads format ${JOURNAL_VERSION}; ${advice}`,
    );
  }
}

export function readJournal(path: string): JournalRead {
  if (!existsSync(path))
    return { records: [], lines: [], truncatedTail: false, badLines: [], problems: [], unsupported: [] };
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const endsClean = text.endsWith('\n') || text.length === 0;
  const records: TrialRecord[] = [];
  const kept: string[] = [];
  const badLines: number[] = [];
  const problems: string[] = [];
  const unsupported: { line: number; version: unknown }[] = [];
  let truncatedTail = false;
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (i === lines.length - 1 && !endsClean) truncatedTail = true;
      else badLines.push(i + 1);
      return;
    }
    const version = value !== null && typeof value === 'object' ? (value as { v?: unknown }).v : undefined;
    if (version !== JOURNAL_VERSION) {
      unsupported.push({ line: i + 1, version });
      return;
    }
    try {
      records.push(
        parseCheckedLine(trialRecordSchema, line, path, i + 1, 'a trial record', 'the journal was edited or damaged'),
      );
      kept.push(line);
    } catch (error) {
      if (!(error instanceof CheckedFileError)) throw error;
      badLines.push(i + 1);
      problems.push(error.message);
    }
  });
  return { records, lines: kept, truncatedTail, badLines, problems, unsupported };
}
