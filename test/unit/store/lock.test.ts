// The run-directory lock: acquire, refuse a live holder, take over a dead one or a reused pid.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StoreError } from '../../../harness/errors.js';
import { acquireLock, LOCK_FILE, lockIsStale, procStart, type LockInfo } from '../../../harness/store/lock.js';
import { tempDir } from '../../support/paths.js';

const info = (over: Partial<LockInfo>): LockInfo => ({
  pid: process.pid,
  host: hostname(),
  proc_start: null,
  acquired_at: '2026-11-23T00:00:00.000Z',
  command: 'tunebench run x',
  ...over,
});

describe('run-directory lock', () => {
  it('is held until released, and a second acquire in the meantime is refused', () => {
    const dir = tempDir();
    const lock = acquireLock(dir, 'first');
    assert.equal(lock.tookOver, null);
    assert.equal((JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockInfo).pid, process.pid);
    assert.throws(
      () => acquireLock(dir, 'second'),
      (e: Error) => e instanceof StoreError && /is in use by another tunebench \(pid \d+ .*: first\)/.test(e.message),
    );
    lock.release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
    acquireLock(dir).release();
  });

  it('takes over the lock of a process that no longer runs, and an unreadable lock file', () => {
    const dir = tempDir();
    // pid 2^22 + 1 is above Linux's pid_max: no process has it.
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(info({ pid: 4194305 })));
    const lock = acquireLock(dir);
    assert.match(
      lock.tookOver ?? '',
      /^took over the stale lock of pid 4194305 on .* since 2026-11-23T00:00:00\.000Z: that process no longer runs$/,
    );
    lock.release();
    writeFileSync(join(dir, LOCK_FILE), '');
    const again = acquireLock(dir);
    assert.match(again.tookOver ?? '', /unreadable lock file/);
    again.release();
  });

  it('tells a reused pid from the holder by its start time, and cannot judge another host', () => {
    const start = procStart(process.pid)!;
    assert.match(start, /^\d+$/);
    assert.equal(lockIsStale(info({ proc_start: start })), false);
    assert.equal(lockIsStale(info({ proc_start: String(Number(start) + 1) })), true);
    assert.equal(lockIsStale(info({ host: 'another-node' })), null);
  });
});
