// Atomic file writes: write a temporary file beside the target, flush it, then rename over the target.
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { StoreError } from '../errors.js';

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    throw new StoreError(`could not write ${path}: ${(error as Error).message}`, { cause: error });
  }
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}
