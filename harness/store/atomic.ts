// Atomic file writes: write a temporary file beside the target, flush it, then rename over the target.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, renameSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { StoreError } from '../errors.js';

/**
 * Writes all of data: write(2) may write part of a buffer (a disk filling up) without an error,
 * so the rest is written until done or until the error comes.
 */
export function writeAll(fd: number, data: Uint8Array): void {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
}

/** Why a write failed, in words a user acts on. */
export function describeWriteError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return `the disk is full (${code}); free space or pass --out <dir> on another disk`;
  if (code === 'EROFS') return 'the file system is read-only (EROFS); pass --out <dir> somewhere writable';
  if (code === 'EACCES' || code === 'EPERM') return `permission denied (${code}); pass --out <dir> somewhere writable`;
  return (error as Error).message;
}

export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  // An unpredictable name, created exclusively and never through a link: a file or link planted
  // beside the target cannot redirect the write.
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let created = false;
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    created = true;
    try {
      writeAll(fd, typeof data === 'string' ? Buffer.from(data) : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    if (created) rmSync(tmp, { force: true });
    throw new StoreError(`could not write ${path}: ${describeWriteError(error)}`, { cause: error });
  }
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Free space a run needs on its disk before each trial: a trial record, its events and a report fit in it. */
export const MIN_FREE_BYTES = 1024 * 1024;

/** Bytes free to this user on the file system holding path; null where statfs is not available. */
export function freeBytes(path: string): number | null {
  try {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}
