// Reads a JSON-lines file line by line in fixed-size chunks, so a file of any size is read without
// building one string of it; a line longer than a bound is reported by its length, never decoded.
import { closeSync, openSync, readSync } from 'node:fs';

const CHUNK = 1024 * 1024;

export type Line =
  | { kind: 'text'; text: string; number: number; last: boolean; endsClean: boolean }
  | { kind: 'too-long'; bytes: number; number: number; last: boolean; endsClean: boolean };

/**
 * Calls `each` for every line of the file (1-based numbers; the empty piece after a final newline is
 * not a line). `last` marks the final line, and `endsClean` whether the file ends with a newline.
 */
export function forEachLine(path: string, maxLine: number, each: (line: Line) => void): void {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(CHUNK);
    let parts: Buffer[] = [];
    let held = 0;
    let tooLong = 0;
    let number = 0;
    let pending: Line | undefined;
    const emit = (line: Line) => {
      if (pending) each(pending);
      pending = line;
    };
    const close = () => {
      number += 1;
      if (tooLong > 0) emit({ kind: 'too-long', bytes: tooLong, number, last: false, endsClean: true });
      else emit({ kind: 'text', text: Buffer.concat(parts).toString('utf8'), number, last: false, endsClean: true });
      parts = [];
      held = 0;
      tooLong = 0;
    };
    const add = (piece: Buffer) => {
      if (tooLong > 0) tooLong += piece.length;
      else if (held + piece.length > maxLine) {
        tooLong = held + piece.length;
        parts = [];
        held = 0;
      } else {
        parts.push(Buffer.from(piece));
        held += piece.length;
      }
    };
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      if (n === 0) break;
      let start = 0;
      for (let nl = buffer.indexOf(10, start); nl >= 0 && nl < n; nl = buffer.indexOf(10, start)) {
        add(buffer.subarray(start, nl));
        close();
        start = nl + 1;
      }
      if (start < n) add(buffer.subarray(start, n));
    }
    const unterminated = held > 0 || tooLong > 0;
    if (unterminated) close();
    if (pending) each({ ...pending, last: true, endsClean: !unterminated });
  } finally {
    closeSync(fd);
  }
}
