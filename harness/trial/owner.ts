// Who owns a trial's cgroups and marked processes: the run directory (the scope, a tag of its scratch
// folder) and the harness that started them (its pid, start time and PID namespace). They are written
// into every trial cgroup's name and every trial's mark, so that a run ends only what is provably its
// own directory's, left by a harness that is provably dead (issue 45): never another directory's trials,
// never a live run's, never a run's in another PID namespace (whose pids this one cannot check).
import { createHash } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { procStat } from './pids.js';

export interface Owner {
  /** The run directory's tag (16 hex digits of its scratch folder's path), or "none" outside a run. */
  scope: string;
  /** The PID namespace's inode, as /proc/<pid>/ns/pid names it; "0" where it cannot be read. */
  pidns: string;
  pid: number;
  /** Clock ticks after boot at which the harness started: with the pid, one process. */
  start: number;
}

/** An owner outside any run directory (a warm server started without one). */
export const NO_SCOPE = 'none';

/** The scope of a run directory: a tag of its scratch folder's absolute path. */
export function scopeOf(scratchDir: string): string {
  return createHash('sha256').update(resolve(scratchDir)).digest('hex').slice(0, 16);
}

/** The inode of a process's PID namespace ("4026531836"), "0" where /proc does not say. */
export function pidNamespace(pid: number | 'self' = 'self'): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/pid`))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

/** This harness as the owner of what it starts for the run directory `scope`. */
export function selfOwner(scope: string): Owner {
  return { scope, pidns: pidNamespace(), pid: process.pid, start: procStat(process.pid)?.startTicks ?? 0 };
}

/** The owner as it is written into names: scope.pidns.pid.start (dots only between fields). */
export function ownerTag(o: Owner): string {
  return `${o.scope}.${o.pidns}.${o.pid}.${o.start}`;
}

const TAG = /^([0-9a-f]{16}|none)\.(\d+)\.(\d+)\.(\d+)(?:\.|$)/;

/** The owner at the start of a name or mark; undefined when it carries none (an older tunebench's). */
export function parseOwner(text: string): Owner | undefined {
  const m = TAG.exec(text);
  if (!m) return undefined;
  return { scope: m[1]!, pidns: m[2]!, pid: Number(m[3]), start: Number(m[4]) };
}

/**
 * self: this harness. alive: another harness that runs now. dead: provably gone (same PID namespace, and
 * no process has that pid with that start time). unknown: another PID namespace, whose pids mean other
 * processes here: it cannot be proven dead, so what it owns is never ended.
 */
export type OwnerState = 'self' | 'alive' | 'dead' | 'unknown';

export function ownerState(o: Owner): OwnerState {
  const ns = pidNamespace();
  if (o.pidns !== ns || ns === '0') return 'unknown';
  if (o.pid === process.pid && o.start === (procStat(process.pid)?.startTicks ?? 0)) return 'self';
  const stat = procStat(o.pid);
  return stat !== undefined && stat.startTicks === o.start && stat.state !== 'Z' && stat.state !== 'X'
    ? 'alive'
    : 'dead';
}
