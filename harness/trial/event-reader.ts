// Reads a workload's JSON-lines events file incrementally, tolerating partial and malformed lines.
// The file is the workload's to write, so it is read defensively: opened non-blocking and read only
// when it is a regular file (a FIFO or a link to a device is refused, never read), in bounded chunks
// per poll so the event loop (and the trial's timeout) always runs, with a cap on the length of a
// line and on the bytes read per trial. What it keeps is bounded too (counted-events.ts): nothing a
// rank sends after its `done` counts, and steps past MAX_STEP_DETAIL are folded into one StepSpan.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { parseEventLine, type WorkloadEvent } from '../workloads/protocol/events.js';
import { CountedEvents } from './counted-events.js';

/** Bytes read per poll (every 200 ms while the trial runs). */
export const READ_PER_POLL = 4 * 1024 * 1024;
/** A line longer than this is malformed and skipped (an event is a few hundred bytes). */
export const MAX_LINE = 1024 * 1024;
/** Bytes of the events file read per trial; the rest is ignored, with a note. */
export const MAX_EVENTS_BYTES = 64 * 1024 * 1024;

export class EventReader {
  malformed = 0;
  /** What was wrong with the file itself (not a regular file, too large); reading stops there. */
  private fileProblem: string | null = null;
  private readonly counted: CountedEvents;
  private offset = 0;
  private pending = '';
  /** Inside an over-long line: drop everything up to the next newline. */
  private skipping = false;
  private readonly decoder = new StringDecoder('utf8');
  private readonly buffer = Buffer.alloc(256 * 1024);

  /** `ranks`: the ranks the trial runs as; each rank's `done` ends what counts of that rank. */
  constructor(
    private readonly path: string,
    ranks = 1,
  ) {
    this.counted = new CountedEvents(ranks);
  }

  /** The events that count, bounded: no event after its rank's `done`, steps past MAX_STEP_DETAIL folded. */
  get events(): WorkloadEvent[] {
    return this.counted.events;
  }

  /**
   * What the trial's reason should say about its events file: a problem with the file itself (not a
   * regular file, too large) and the events that did not count (after `done`); null when none.
   */
  get problem(): string | null {
    const all = [this.fileProblem, ...this.counted.ignored()].filter((x): x is string => x !== null);
    return all.length > 0 ? all.join('; ') : null;
  }

  /** Reads what was appended since the last call (at most READ_PER_POLL bytes); returns the new counted events. */
  poll(limit = READ_PER_POLL): WorkloadEvent[] {
    if (this.fileProblem !== null) return [];
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return [];
    }
    const fresh: WorkloadEvent[] = [];
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) {
        this.fileProblem =
          `the events file (${this.path}) ` +
          'was replaced by something that is not a regular file (a FIFO, a device or a socket), so it was not read';
        return [];
      }
      let budget = limit;
      while (budget > 0) {
        if (this.offset >= MAX_EVENTS_BYTES) {
          if (st.size > this.offset)
            this.fileProblem = `the events file grew past ${MAX_EVENTS_BYTES / 1024 / 1024} MiB; the rest was not read`;
          break;
        }
        const n = readSync(
          fd,
          this.buffer,
          0,
          Math.min(this.buffer.length, budget, MAX_EVENTS_BYTES - this.offset),
          this.offset,
        );
        if (n === 0) break;
        this.offset += n;
        budget -= n;
        this.feed(this.decoder.write(this.buffer.subarray(0, n)), fresh);
      }
      if (this.offset >= MAX_EVENTS_BYTES && st.size > this.offset)
        this.fileProblem = `the events file grew past ${MAX_EVENTS_BYTES / 1024 / 1024} MiB; the rest was not read`;
    } finally {
      closeSync(fd);
    }
    return fresh;
  }

  /** Final read after the process ended: the rest of the file, and a last line without a newline. */
  finish(): WorkloadEvent[] {
    const fresh = this.poll(MAX_EVENTS_BYTES);
    const last = this.pending + this.decoder.end();
    if (!this.skipping && last.trim()) this.take(last, fresh);
    this.pending = '';
    return fresh;
  }

  private feed(text: string, into: WorkloadEvent[]): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      const line = this.pending + piece;
      this.pending = '';
      this.take(line, into);
    }
    if (this.skipping) return;
    this.pending += text.slice(start);
    if (this.pending.length > MAX_LINE) {
      this.malformed += 1;
      this.pending = '';
      this.skipping = true;
    }
  }

  private take(line: string, into: WorkloadEvent[]): void {
    if (!line.trim()) return;
    if (line.length > MAX_LINE) {
      this.malformed += 1;
      return;
    }
    const event = parseEventLine(line);
    if (event === null) this.malformed += 1;
    else if (event !== undefined && this.counted.take(event)) into.push(event);
  }
}
