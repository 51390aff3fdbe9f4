// Reads a workload's JSON-lines events file incrementally, tolerating partial and malformed lines.
import { closeSync, openSync, readSync } from 'node:fs';
import { parseEventLine, type WorkloadEvent } from '../workloads/protocol/events.js';

export class EventReader {
  readonly events: WorkloadEvent[] = [];
  malformed = 0;
  private offset = 0;
  private pending = '';

  constructor(private readonly path: string) {}

  /** Reads what was appended since the last call; returns the new events. */
  poll(): WorkloadEvent[] {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return [];
    }
    const fresh: WorkloadEvent[] = [];
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        this.pending += buffer.toString('utf8', 0, n);
      }
    } finally {
      closeSync(fd);
    }
    const lines = this.pending.split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) this.take(line, fresh);
    return fresh;
  }

  /** Final read: a last line without a newline is still parsed. */
  finish(): WorkloadEvent[] {
    const fresh = this.poll();
    if (this.pending.trim()) this.take(this.pending, fresh);
    this.pending = '';
    return fresh;
  }

  private take(line: string, into: WorkloadEvent[]): void {
    if (!line.trim()) return;
    const event = parseEventLine(line);
    if (event === null) this.malformed += 1;
    else if (event !== undefined) {
      this.events.push(event);
      into.push(event);
    }
  }
}
