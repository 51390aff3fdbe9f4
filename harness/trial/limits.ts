// Enforcing the per-trial memory cap: cgroup v2 memory.max where writable, else prlimit --as.
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { LimitMechanism } from '../domain/index.js';

export type MechanismChoice = 'auto' | 'prlimit' | 'cgroup' | 'none';

export interface MemoryLimit {
  mechanism: LimitMechanism;
  bytes: number | null;
  /** Prefix for the command's argv (prlimit), empty otherwise. */
  prefix: string[];
  /** For cgroup v2: the cgroup directory the child is moved into. */
  cgroupDir?: string;
}

export const CGROUP_ROOT = '/sys/fs/cgroup';

/** A cgroup v2 directory where this process may create children with a memory controller, or undefined. */
export function writableCgroup(root = CGROUP_ROOT): string | undefined {
  try {
    if (!existsSync(join(root, 'cgroup.controllers'))) return undefined;
    const self = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'));
    const dir = join(root, self ? self.slice(3).trim() : '');
    const controllers = readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8');
    if (!/\bmemory\b/.test(controllers)) return undefined;
    accessSync(dir, constants.W_OK);
    return dir;
  } catch {
    return undefined;
  }
}

const PRLIMIT_LOCATIONS = ['/usr/bin/prlimit', '/bin/prlimit', '/usr/sbin/prlimit', '/sbin/prlimit'];

/**
 * The absolute path of prlimit, from tunebench's own PATH or the usual locations. The trial is
 * spawned with the workload's environment, so a bare "prlimit" would be looked up on a PATH that
 * workload.env may set: the experiment file would choose the program that enforces its own cap.
 */
export function prlimitPath(searchPath = process.env['PATH'] ?? ''): string | undefined {
  const onPath = searchPath
    .split(delimiter)
    .filter((dir) => isAbsolute(dir))
    .map((dir) => join(dir, 'prlimit'));
  return [...onPath, ...PRLIMIT_LOCATIONS].find(isExecutableFile);
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function hasPrlimit(): boolean {
  return prlimitPath() !== undefined;
}

/** Decides how the cap is enforced; throws when the requested mechanism is unavailable. */
export function planLimit(bytes: number | undefined, choice: MechanismChoice, trialId: string): MemoryLimit {
  if (bytes === undefined || choice === 'none') return { mechanism: 'none', bytes: null, prefix: [] };
  const cgroupParent = choice === 'prlimit' ? undefined : writableCgroup();
  if (cgroupParent) {
    const dir = join(cgroupParent, `tunebench-${process.pid}-${trialId}`);
    return { mechanism: 'cgroup-v2', bytes, prefix: [], cgroupDir: dir };
  }
  if (choice === 'cgroup')
    throw new Error(
      'limits.mechanism is "cgroup" but no writable cgroup v2 with the memory controller was found; ' +
        'use "prlimit" or "auto"',
    );
  const prlimit = prlimitPath();
  if (prlimit === undefined)
    throw new Error(
      'limits.memory needs prlimit (util-linux) or a writable cgroup v2; install util-linux or remove limits.memory',
    );
  return { mechanism: 'prlimit-as', bytes, prefix: [prlimit, `--as=${bytes}`, '--'] };
}

/** Creates the cgroup with its limit; returns its cgroup.procs file, or null without a cgroup. */
export function prepareCgroup(limit: MemoryLimit): string | null {
  if (!limit.cgroupDir || limit.bytes === null) return null;
  mkdirSync(limit.cgroupDir, { recursive: true });
  writeFileSync(join(limit.cgroupDir, 'memory.max'), String(limit.bytes));
  try {
    writeFileSync(join(limit.cgroupDir, 'memory.swap.max'), '0');
  } catch {
    // Swap accounting may be off; the cap still holds for RAM.
  }
  return join(limit.cgroupDir, 'cgroup.procs');
}

/** Creates the cgroup and moves pid into it (cgroup v2 only). */
export function enterCgroup(limit: MemoryLimit, pid: number): void {
  const procs = prepareCgroup(limit);
  if (procs !== null) writeFileSync(procs, String(pid));
}

/** Reads peak usage and OOM kills of the trial's cgroup, then removes it. */
export function leaveCgroup(limit: MemoryLimit): { peakBytes: number | null; oomKills: number } {
  if (!limit.cgroupDir) return { peakBytes: null, oomKills: 0 };
  const read = (f: string): string => {
    try {
      return readFileSync(join(limit.cgroupDir!, f), 'utf8');
    } catch {
      return '';
    }
  };
  const peak = Number(read('memory.peak').trim());
  const oomKills = Number(/oom_kill (\d+)/.exec(read('memory.events'))?.[1] ?? 0);
  try {
    rmdirSync(limit.cgroupDir);
  } catch {
    // Still populated by a stray process; leave it for the kernel to reap.
  }
  return { peakBytes: Number.isFinite(peak) && peak > 0 ? peak : null, oomKills };
}
