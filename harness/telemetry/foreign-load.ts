// Foreign load: CPU that processes outside the trial's tree (another tenant, a build, a second job)
// used on the cores the trial could run on while it ran. It slows trials for reasons that are not
// their config, so it biases every comparison that the trial takes part in.
import { readFileSync } from 'node:fs';
import { quantile } from 'simple-statistics';
import type { ForeignLoad } from '../domain/telemetry.js';

export type { ForeignLoad };

/** Material when the foreign load averages at least this many cores ... */
export const FOREIGN_MIN_CORES = 0.5;
/** ... and either takes at least this share of the cores available to the job ... */
export const FOREIGN_MIN_SHARE = 0.25;
/** ... or leaves less than this many of them idle on average (the trial and the others competed for time slices). */
export const SATURATED_IDLE_CORES = 0.5;

/**
 * Foreign load from aligned samples: `treeCores[i]` cores used by the trial's tree and
 * `perCore[i][j]` the utilisation (0..1) of core j over the same interval. `available` lists the
 * indices into each `perCore[i]` that the trial could use (all when absent). Null without samples.
 */
export function foreignLoad(
  treeCores: readonly number[],
  perCore: readonly (readonly number[])[],
  available?: readonly number[],
): ForeignLoad | null {
  const n = Math.min(treeCores.length, perCore.length);
  if (n === 0) return null;
  const foreign: number[] = [];
  let busyTotal = 0;
  let cores = 0;
  for (let i = 0; i < n; i++) {
    const row = perCore[i]!;
    const idx = available ?? row.map((_, j) => j);
    const busy = idx.reduce((sum, j) => sum + (row[j] ?? 0), 0);
    cores = Math.max(cores, idx.length);
    busyTotal += busy;
    foreign.push(Math.min(idx.length, Math.max(0, busy - (treeCores[i] ?? 0))));
  }
  if (cores === 0) return null;
  const mean = foreign.reduce((a, b) => a + b, 0) / n;
  const r3 = (v: number) => Number(v.toFixed(3));
  return {
    mean: r3(mean),
    p95: r3(quantile(foreign, 0.95)),
    max: r3(Math.max(...foreign)),
    available_cores: cores,
    share: r3(mean / cores),
    busy_cores: r3(busyTotal / n),
  };
}

/**
 * Whether the foreign load is large enough to bias the trial: at least half a core on average, and
 * either a quarter of the available cores or enough to fill them (less than half a core idle). Half
 * a core is well above the sampler's own noise and the harness's overhead; on 2 cores both rules
 * read "half a core".
 */
export function isMaterial(f: ForeignLoad): boolean {
  if (f.mean < FOREIGN_MIN_CORES) return false;
  return f.share >= FOREIGN_MIN_SHARE || f.available_cores - f.busy_cores < SATURATED_IDLE_CORES;
}

/** The trial record's note for a material foreign load. */
export function foreignLoadNote(f: ForeignLoad): string {
  return (
    `foreign load: processes outside the trial used ${f.mean.toFixed(2)} cores on average (p95 ${f.p95.toFixed(2)}) ` +
    `of the ${f.available_cores} available to the job (${Math.round(f.share * 100)}%) while it ran; ` +
    'its timing competed with them and is biased'
  );
}

/**
 * The CPUs a process may run on, from `Cpus_allowed_list` in /proc/<pid>/status (e.g. "0-3,8"):
 * a SLURM allocation or a cpuset shows here. Null when it cannot be read.
 */
export function allowedCpus(pid: number | 'self' = 'self', status?: string): Set<number> | null {
  let text = status;
  if (text === undefined) {
    try {
      text = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      return null;
    }
  }
  const list = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(text)?.[1];
  if (!list) return null;
  const out = new Set<number>();
  for (const part of list.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return null;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    for (let c = lo; c <= hi; c++) out.add(c);
  }
  return out.size > 0 ? out : null;
}
