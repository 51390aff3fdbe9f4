// Pids from outside are hostile until checked: a pid is signalled only when /proc shows it is a
// process the harness started (or a descendant of one), never pid 0, 1, the harness or its ancestors.
import { readFileSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Clock ticks after boot at which the process started: with the pid, it names one process. */
  startTicks: number;
  /** One-letter state (R, S, Z, ...). */
  state: string;
}

/** /proc/<pid>/stat, or undefined when the process is gone (or the pid is not a number > 0). */
export function procStat(pid: number): ProcStat | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: the fields resume after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const startTicks = Number(f[19]);
  return { pid, state: f[0] ?? '?', ppid: Number(f[1]), pgrp: Number(f[2]), startTicks };
}

/** The harness and every process above it: never a target, whatever a workload names. */
function protectedPids(): Set<number> {
  const out = new Set<number>([0, 1, process.pid]);
  let pid = process.ppid;
  for (let i = 0; i < 64 && pid > 1 && !out.has(pid); i++) {
    out.add(pid);
    pid = procStat(pid)?.ppid ?? 0;
  }
  return out;
}

/** A pid as a workload's reply names it: a safe integer above 1 that is not the harness. */
export function plausiblePid(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 1 && value !== process.pid;
}

/** A process the harness knows: its pid and the start time it had when the harness checked it. */
export interface KnownProcess {
  pid: number;
  startTicks: number;
}

/** Checks that `pid` is a live child of `parent` now; the identity to signal it by later. */
export function verifyChild(pid: number, parent: number): KnownProcess | undefined {
  if (!plausiblePid(pid) || protectedPids().has(pid)) return undefined;
  const stat = procStat(pid);
  if (stat === undefined || stat.ppid !== parent) return undefined;
  return { pid, startTicks: stat.startTicks };
}

/** The process's identity now (for a process the harness spawned itself). */
export function identify(pid: number): KnownProcess | undefined {
  const stat = procStat(pid);
  return stat === undefined ? undefined : { pid, startTicks: stat.startTicks };
}

/**
 * Signals a known process if it is still the same process (same start time) and not protected.
 * Returns whether the signal was sent.
 */
export function signalKnown(p: KnownProcess, signal: NodeJS.Signals): boolean {
  if (protectedPids().has(p.pid) || procStat(p.pid)?.startTicks !== p.startTicks) return false;
  return trySignal(p.pid, signal);
}

/**
 * Signals the process group led by a known process. The group id is the leader's pid; the leader
 * must still be that process, or be gone with the group alive (a pid is not reused while a group
 * holds it as its id).
 */
export function signalGroup(p: KnownProcess, signal: NodeJS.Signals): boolean {
  if (protectedPids().has(p.pid)) return false;
  const now = procStat(p.pid);
  if (now !== undefined && (now.startTicks !== p.startTicks || now.pgrp !== p.pid)) return false;
  return trySignal(-p.pid, signal);
}

/** Signals pids that the caller found by a trusted relation (descendant, cgroup member), minus the protected ones. */
export function signalAll(pids: Iterable<number>, signal: NodeJS.Signals, minStartTicks = 0): number {
  const guard = protectedPids();
  let sent = 0;
  for (const pid of pids) {
    if (guard.has(pid) || !plausiblePid(pid)) continue;
    const stat = procStat(pid);
    // A process that started before the trial was moved in from outside: not the trial's.
    if (stat === undefined || stat.startTicks < minStartTicks) continue;
    if (trySignal(pid, signal)) sent++;
  }
  return sent;
}

function trySignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false; // gone meanwhile
  }
}

/** The live descendants of a known process (itself included); none once its pid names another process. */
export function descendantsOf(p: KnownProcess, tree: (root: number) => number[]): number[] {
  if (procStat(p.pid)?.startTicks !== p.startTicks) return [];
  try {
    return tree(p.pid);
  } catch {
    return [p.pid];
  }
}
