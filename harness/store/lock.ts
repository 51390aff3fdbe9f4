// The run-directory lock (.lock): one tunebench process writes a run directory at a time. A lock
// left by a process that no longer runs on this host (kill -9, OOM killer, reboot) is stale and is
// taken over with a message; a live holder, or a holder on another host, is refused.
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StoreError } from '../errors.js';
import { z } from 'zod';

export const LOCK_FILE = '.lock';

const lockInfoSchema = z.object({
  pid: z.number().int(),
  host: z.string(),
  /** The process start time from /proc/<pid>/stat, so that a reused pid is not mistaken for the holder. */
  proc_start: z.string().nullable(),
  acquired_at: z.string(),
  command: z.string(),
});
export type LockInfo = z.infer<typeof lockInfoSchema>;

export interface RunLock {
  path: string;
  /** Set when a stale lock was taken over: what happened, for the user. */
  tookOver: string | null;
  /**
   * Whether this process still holds the lock: null when it does (a lock file that was deleted is made
   * again), else what holds it now. Checked before each trial: a workload may delete the lock, and a
   * second tunebench may then have taken the directory.
   */
  check(): string | null;
  release(): void;
}

/** Fields 3 (state) and 22 (start time in clock ticks since boot) of /proc/<pid>/stat; null where /proc is missing. */
function procStat(pid: number): { state: string; start: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count fields after the last ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', start: fields[19] ?? '' };
  } catch {
    return null;
  }
}

/** The start time of a process, as a lock records it to tell its holder from a later process with the same pid. */
export function procStart(pid: number): string | null {
  return procStat(pid)?.start ?? null;
}

/**
 * Whether the holder of a lock is gone: no such process, a zombie (killed, not yet reaped), or a
 * process that started at another time (the pid was reused). null when that cannot be known (another host).
 */
export function lockIsStale(info: LockInfo, host = hostname()): boolean | null {
  if (info.host !== host) return null;
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return true;
  }
  const stat = procStat(info.pid);
  if (stat?.state === 'Z' || stat?.state === 'X') return true;
  return info.proc_start !== null && stat !== null && stat.start !== info.proc_start;
}

function readLock(path: string): LockInfo | null {
  try {
    // A lock that is not JSON or not of this shape is not a holder's: it is taken over as stale.
    const info = lockInfoSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return info.success ? info.data : null;
  } catch {
    return null;
  }
}

/**
 * Creates the lock whole: written to a file of our own, then hard-linked into place, which fails
 * with EEXIST when a lock is there. So a lock file is never seen empty or half-written.
 */
function tryCreate(path: string, info: LockInfo): boolean {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(info)}\n`);
    linkSync(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new StoreError(`could not lock ${path}: ${(error as Error).message}`, { cause: error });
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** What a lock guards, for its messages: the lock file's name and what to do once the holder is gone. */
export interface LockTarget {
  /** The lock file's name in the folder (default LOCK_FILE). */
  file?: string;
  /** What the user does after stopping the holder (default: resume). */
  then?: string;
}

/**
 * Locks a folder for this process (a run directory by default), taking over a stale lock; throws
 * StoreError, naming the holder, when it is held.
 */
export function acquireLock(dir: string, command = process.argv.slice(1).join(' '), target: LockTarget = {}): RunLock {
  const path = join(dir, target.file ?? LOCK_FILE);
  const then = target.then ?? 'resume';
  const mine: LockInfo = {
    pid: process.pid,
    host: hostname(),
    proc_start: procStart(process.pid),
    acquired_at: new Date().toISOString(),
    command,
  };
  let tookOver: string | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (tryCreate(path, mine)) return lockHandle(path, tookOver, mine);
    const held = readLock(path);
    if (held === null) {
      // Locks are created whole (tryCreate), so this one was damaged afterwards.
      tookOver = `took over an unreadable lock file ${path} (it was damaged)`;
    } else {
      const stale = lockIsStale(held, mine.host);
      const who = `pid ${held.pid} on ${held.host} since ${held.acquired_at}`;
      if (stale === false) {
        throw new StoreError(
          `${dir} is in use by another tunebench (${who}: ${held.command}); ` +
            `wait for it to finish, or stop it (kill ${held.pid}) and ${then}`,
        );
      }
      if (stale === null) {
        throw new StoreError(
          `${dir} is locked by a tunebench on another host (${who}); ` +
            `if that job is gone (its node failed or was preempted), delete ${path} and ${then}`,
        );
      }
      tookOver = `took over the stale lock of ${who}: that process no longer runs`;
    }
    rmSync(path, { force: true });
  }
  throw new StoreError(`could not lock ${dir}: another process keeps creating ${path}`);
}

function lockHandle(path: string, tookOver: string | null, mine: LockInfo): RunLock {
  let released = false;
  const ours = (info: LockInfo | null) =>
    info !== null && info.pid === mine.pid && info.host === mine.host && info.proc_start === mine.proc_start;
  return {
    path,
    tookOver,
    check() {
      if (ours(readLock(path))) return null;
      // Deleted (by a workload, or by hand): made again, unless another process made it first.
      if (!existsSync(path) && tryCreate(path, mine)) return null;
      const held = readLock(path);
      return held === null
        ? `its lock file ${path} was replaced by something unreadable`
        : `its lock file ${path} now names pid ${held.pid} on ${held.host} (${held.command})`;
    },
    release() {
      if (released) return;
      released = true;
      // Only remove our own lock: a stale-lock takeover by someone else must not be undone.
      if (existsSync(path) && readLock(path)?.pid === process.pid) rmSync(path, { force: true });
    },
  };
}
