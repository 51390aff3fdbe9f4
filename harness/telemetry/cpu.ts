// CPU time of a process tree and of each core, from /proc, for utilisation between two samples.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc times; 100 on Linux for all common architectures. */
export const CLK_TCK = 100;

/** utime + stime of a process in seconds, or 0 when it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state(0) ppid(1) ... utime(11) stime(12).
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

export interface CoreTimes {
  /** The N of cpuN: the id that CPU affinity lists use (offline cores leave gaps). */
  id: number;
  busy: number;
  total: number;
}

/** Busy and total jiffies of each core from /proc/stat. */
export function coreTimes(text = readFileSync('/proc/stat', 'utf8')): CoreTimes[] {
  const cores: CoreTimes[] = [];
  for (const line of text.split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const v = m[2]!.trim().split(/\s+/).map(Number);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    cores.push({ id: Number(m[1]), busy: total - idle, total });
  }
  return cores;
}

/** Per-core utilisation in [0, 1] between two readings. */
export function coreUtilisation(before: readonly CoreTimes[], after: readonly CoreTimes[]): number[] {
  return after.map((a, i) => {
    const b = before[i];
    if (!b) return 0;
    const total = a.total - b.total;
    return total > 0 ? Math.min(1, Math.max(0, (a.busy - b.busy) / total)) : 0;
  });
}
