// Checks that a trial stayed inside what the harness set up for it (issue 45). A workload run as root can
// undo any cgroup from inside: raise its own memory cap, or write its pid into a parent's cgroup.procs and
// leave every cap. Whatever the mode, the harness verifies, while the trial runs and after it: its memory
// cap is the one written, its first process is in its cgroups, no process carrying its mark is outside
// them, and its peak is within the cap. A trial that fails a check is invalid, never ok: its measurement
// was not made under the limits it claims.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatBytes } from '../experiment/units.js';
import { memoryLimitNow, type TrialCgroup } from './cgroup.js';
import { procStat } from './pids.js';

/** A cgroup peak may pass the cap by the kernel's charge batching: a few pages per CPU, well under this. */
const PEAK_SLACK_BYTES = 8 * 2 ** 20;

/** Why the trial's cap is not the one written (or no longer enforced), or undefined while it is. */
export function limitChanged(cg: TrialCgroup): string | undefined {
  if (cg.limitBytes === undefined) return undefined;
  // v1: with the OOM killer disabled a trial at its cap hangs (under_oom) instead of being killed, until the timeout.
  if (cg.memory?.version === 'v1' && /^oom_kill_disable 1/m.test(readOr(join(cg.memory.dir, 'memory.oom_control'))))
    return "disabled the kernel's OOM killer in its cgroup (memory.oom_control), so its cap ends nothing";
  const now = memoryLimitNow(cg);
  // The kernel keeps a cap in pages: it reads back rounded down to a page (up to 64 KiB on some machines).
  if (now === null || (now <= cg.limitBytes && cg.limitBytes - now < 65536)) return undefined;
  const shown = now === Infinity ? 'unlimited' : formatBytes(now);
  return `changed its own memory limit (from ${formatBytes(cg.limitBytes)} to ${shown})`;
}

/** A process's cgroups (/proc/<pid>/cgroup): controller list ("" for v2) and path per line; null once it is gone. */
function cgroupLines(pid: number): { controllers: string[]; path: string }[] | null {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .map((l) => /^\d+:([^:]*):(.*)$/.exec(l.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ controllers: m[1] === '' ? [] : m[1]!.split(','), path: m[2]! }));
  } catch {
    return null;
  }
}

/**
 * Why `pid` (a process of the trial) is not inside the trial's cgroups, or undefined while it is (or is gone):
 * in every hierarchy where the trial has a cgroup (v2, v1 memory, v1 freezer), its path must run through it
 * (a child cgroup of the trial's own is inside).
 */
export function outsideCgroups(cg: TrialCgroup, pid: number): string | undefined {
  // An exiting process is moved to the root cgroup by the kernel before it becomes a zombie: not an escape.
  const state = procStat(pid)?.state;
  if (state === undefined || state === 'Z' || state === 'X') return undefined;
  const lines = cgroupLines(pid);
  if (lines === null) return undefined;
  const name = (dir: string | undefined) => dir?.split('/').at(-1);
  const checks: [string | undefined, (c: string[]) => boolean][] = [
    [name(cg.unified), (c) => c.length === 0],
    [cg.memory?.version === 'v1' ? name(cg.memory.dir) : undefined, (c) => c.includes('memory')],
    [name(cg.freezer), (c) => c.includes('freezer')],
  ];
  for (const [own, isLine] of checks) {
    if (own === undefined) continue;
    const line = lines.find((l) => isLine(l.controllers));
    if (line && !line.path.split('/').includes(own)) return `left its cgroups (pid ${pid} moved to ${line.path})`;
  }
  return undefined;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * outsideCgroups, confirmed: a process seen outside is looked at again `ms` later, and counts only when it
 * is still there and still outside (a process in its exit passes through the root cgroup on its way out).
 */
export function confirmedOutside(cg: TrialCgroup, pid: number, ms = 50): string | undefined {
  if (outsideCgroups(cg, pid) === undefined) return undefined;
  Atomics.wait(sleeper, 0, 0, ms);
  return outsideCgroups(cg, pid);
}

/** Why the trial's peak says the cap did not hold (it passed the cap), or undefined. */
export function peakOverCap(cg: TrialCgroup, peakBytes: number | null): string | undefined {
  if (cg.limitBytes === undefined || peakBytes === null) return undefined;
  if (peakBytes <= cg.limitBytes + PEAK_SLACK_BYTES) return undefined;
  return `its peak (${formatBytes(peakBytes)}) passed its ${formatBytes(cg.limitBytes)} cap: the cap did not hold`;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
