// A trial's own cgroups, nested under the harness's: its processes cannot leave them, its memory is
// capped as a whole, and it ends by killing every member (cgroup.kill on v2; freeze, kill, thaw on v1).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryCgroupVersion, type CgroupHost } from './cgroup-host.js';
import { procStat, signalAll } from './pids.js';
import { ownerState, ownerTag, parseOwner, type Owner } from './owner.js';

export interface TrialCgroup {
  /** Every directory made for the trial, one per hierarchy. */
  dirs: string[];
  /** The cgroup.procs files the trial's first process joins before it runs the workload. */
  procsFiles: string[];
  /** Which hierarchy caps memory (and so where the peak and OOM kills are read), if any. */
  memory?: { version: 'v2' | 'v1'; dir: string };
  unified?: string;
  freezer?: string;
  /** Where pids.max caps the trial's processes and threads (its v2 cgroup, or a v1 pids cgroup), if anywhere. */
  pids?: string;
  /** Processes that started before this are not the trial's (moved in from outside). */
  minStartTicks: number;
  /** The memory cap the harness last wrote (bytes), to tell a trial that changed it. */
  limitBytes?: number;
}

/** The name prefix of every cgroup tunebench makes: tunebench-<owner: scope.pidns.pid.start>.<label>. */
const PREFIX = 'tunebench-';

/**
 * Makes the trial's cgroups, named by their owner (owner.ts). `memoryBytes` caps the tree where a memory
 * cgroup can be made (null: no cap, the cgroup only contains and measures).
 */
export function createTrialCgroup(
  host: CgroupHost,
  owner: Owner,
  label: string,
  memoryBytes: number | null,
  /** pids.max: most processes and threads at once; undefined: not capped. */
  pids?: number,
): TrialCgroup {
  const name = `${PREFIX}${ownerTag(owner)}.${label}`;
  const cg: TrialCgroup = { dirs: [], procsFiles: [], minStartTicks: 0 };
  const make = (parent: string): string => {
    const dir = join(parent, name);
    mkdirSync(dir);
    cg.dirs.push(dir);
    cg.procsFiles.push(join(dir, 'cgroup.procs'));
    return dir;
  };
  try {
    if (host.unified) cg.unified = make(host.unified.dir);
    const version = memoryCgroupVersion(host);
    if (version === 'v2' && cg.unified) cg.memory = { version, dir: cg.unified };
    if (version === 'v1') cg.memory = { version, dir: make(host.memory!) };
    if (!cg.unified && host.freezer) cg.freezer = make(host.freezer);
    if (cg.unified && host.unified?.pids) cg.pids = cg.unified;
    else if (host.pids) cg.pids = make(host.pids);
    if (cg.pids && pids !== undefined) writeFileSync(join(cg.pids, 'pids.max'), String(pids));
    if (memoryBytes !== null && cg.memory) setMemoryLimit(cg, memoryBytes);
  } catch (error) {
    removeTrialCgroup(cg);
    throw error;
  }
  return cg;
}

/** Sets (or lowers) the trial's memory cap, swap included. */
export function setMemoryLimit(cg: TrialCgroup, bytes: number): void {
  if (!cg.memory) return;
  const { version, dir } = cg.memory;
  const value = String(Math.max(0, Math.floor(bytes)));
  cg.limitBytes = Number(value);
  if (version === 'v2') {
    writeFileSync(join(dir, 'memory.max'), value);
    tryWrite(join(dir, 'memory.swap.max'), '0');
  } else {
    writeFileSync(join(dir, 'memory.limit_in_bytes'), value);
    // memsw caps memory + swap; it must not be below limit_in_bytes (absent without swap accounting).
    tryWrite(join(dir, 'memory.memsw.limit_in_bytes'), value);
  }
}

/** How often a fork or clone of the trial failed at its pids.max (pids.events "max"); 0 without a pids cgroup. */
export function pidsLimitHits(cg: TrialCgroup): number {
  if (!cg.pids) return 0;
  return Number(/^max (\d+)/m.exec(readOr(join(cg.pids, 'pids.events')))?.[1] ?? 0);
}

/** The memory cap the trial's cgroup holds now (bytes; Infinity for "max" or v1's unlimited); null when unread. */
export function memoryLimitNow(cg: TrialCgroup): number | null {
  if (!cg.memory) return null;
  const { version, dir } = cg.memory;
  const text = readOr(join(dir, version === 'v2' ? 'memory.max' : 'memory.limit_in_bytes')).trim();
  if (text === '') return null;
  if (text === 'max') return Infinity;
  const n = Number(text);
  // v1 reads an unlimited cap as a page-rounded 2^63 - 1.
  return Number.isFinite(n) ? (n >= 2 ** 62 ? Infinity : n) : null;
}

/** The pids in the trial's cgroups now, those of every cgroup a member made inside them included. */
export function cgroupMembers(cg: TrialCgroup): number[] {
  const out = new Set<number>();
  const files = [...cg.procsFiles, ...cg.dirs.flatMap((d) => subtree(d).map((c) => join(c, 'cgroup.procs')))];
  for (const f of files) for (const line of readOr(f).split('\n')) if (line.trim()) out.add(Number(line));
  return [...out];
}

/**
 * The cgroups a trial made under `dir` (a helper may move into a child cgroup of its own), deepest first;
 * `dir` itself is not listed. Stops at a depth no workload needs, so a planted deep tree cannot stall it.
 */
export function subtree(dir: string, depth = 0): string[] {
  if (depth > 32) return [];
  let entries: string[];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
  return entries.flatMap((child) => [...subtree(child, depth + 1), child]);
}

/** Peak memory charged to the trial's cgroup and the kernel's OOM kills in it. */
export function cgroupMemory(cg: TrialCgroup): {
  peakBytes: number | null;
  usageBytes: number | null;
  oomKills: number;
} {
  if (!cg.memory) return { peakBytes: null, usageBytes: null, oomKills: 0 };
  const { version, dir } = cg.memory;
  const num = (f: string): number | null => {
    const text = readOr(join(dir, f)).trim();
    const n = Number(text);
    return text !== '' && Number.isFinite(n) ? n : null;
  };
  if (version === 'v2') {
    const kills = Number(/oom_kill (\d+)/.exec(readOr(join(dir, 'memory.events')))?.[1] ?? 0);
    return { peakBytes: positive(num('memory.peak')), usageBytes: num('memory.current'), oomKills: kills };
  }
  const kills = Number(/oom_kill (\d+)/.exec(readOr(join(dir, 'memory.oom_control')))?.[1] ?? 0);
  return {
    peakBytes: positive(num('memory.max_usage_in_bytes')),
    usageBytes: num('memory.usage_in_bytes'),
    oomKills: kills,
  };
}

/**
 * SIGKILLs every process in the trial's cgroups, synchronously, until they are empty (at most
 * `waitMs`). Only members that started after the trial did are signalled, never the harness or its
 * ancestors; returns the pids still there (a member the harness refused to signal, or one that would not die).
 */
export function killTrialCgroup(cg: TrialCgroup, waitMs = 3000): number[] {
  const deadline = Date.now() + waitMs;
  let members = cgroupMembers(cg);
  for (let round = 0; members.length > 0 && Date.now() < deadline; round++) {
    const foreign = members.filter((pid) => !isTrialMember(cg, pid));
    // Freezing a cgroup that holds a process the trial may not touch could freeze the harness itself.
    const frozen = foreign.length === 0 && freeze(cg, true);
    if (foreign.length === 0 && cg.unified && existsSync(join(cg.unified, 'cgroup.kill'))) {
      tryWrite(join(cg.unified, 'cgroup.kill'), '1');
    }
    signalAll(members, 'SIGKILL', cg.minStartTicks);
    if (frozen) freeze(cg, false);
    sleepMs(round < 10 ? 2 : 20);
    const left = cgroupMembers(cg);
    if (left.every((pid) => foreign.includes(pid))) return left;
    members = left;
  }
  return members;
}

function isTrialMember(cg: TrialCgroup, pid: number): boolean {
  const stat = procStat(pid);
  return stat === undefined || (pid > 1 && pid !== process.pid && stat.startTicks >= cg.minStartTicks);
}

/** Freezes (or thaws) the trial: v2 cgroup.freeze, v1 freezer.state. Returns whether it is frozen. */
function freeze(cg: TrialCgroup, on: boolean): boolean {
  if (cg.unified && existsSync(join(cg.unified, 'cgroup.freeze'))) {
    if (!tryWrite(join(cg.unified, 'cgroup.freeze'), on ? '1' : '0')) return false;
    if (!on) return false;
    // Frozen once cgroup.events says so; killing a v2-frozen process works, so no long wait is needed.
    for (let i = 0; i < 50 && !/frozen 1/.test(readOr(join(cg.unified, 'cgroup.events'))); i++) sleepMs(1);
    return true;
  }
  if (!cg.freezer) return false;
  if (!tryWrite(join(cg.freezer, 'freezer.state'), on ? 'FROZEN' : 'THAWED')) return false;
  if (!on) return false;
  for (let i = 0; i < 100 && readOr(join(cg.freezer, 'freezer.state')).trim() !== 'FROZEN'; i++) sleepMs(1);
  return true;
}

/**
 * Removes the trial's cgroups, and every cgroup a member made inside them, deepest first (empty ones; a
 * cgroup that still holds a process stays, and is named).
 */
export function removeTrialCgroup(cg: TrialCgroup): string[] {
  const left: string[] = [];
  for (const dir of [...cg.dirs].reverse().flatMap((d) => [...subtree(d), d])) {
    try {
      rmdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') left.push(dir);
    }
  }
  return left;
}

/** What the sweep of a run directory's leftover cgroups found. */
export interface LeftoverCgroups {
  /** Processes killed in cgroups whose owner is provably dead. */
  killed: number;
  /** Cgroups of this directory whose owner still runs (another tunebench process of the same directory). */
  live: Owner[];
  /** Cgroups of this directory whose owner runs in another PID namespace: left alone, named. */
  unknown: string[];
}

/**
 * Ends what a killed harness of this run directory (`scope`) left behind: every trial cgroup of the
 * directory whose owner is provably dead is emptied and removed with its subtree. Cgroups of other
 * directories, of a live owner or of an owner in another PID namespace are never touched.
 */
export function endOrphanedCgroups(host: CgroupHost, scope: string): LeftoverCgroups {
  const out: LeftoverCgroups = { killed: 0, live: [], unknown: [] };
  const parents = [host.unified?.dir, host.memory, host.freezer].filter((d): d is string => d !== undefined);
  for (const parent of parents) {
    let entries: string[];
    try {
      entries = readdirSync(parent);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const owner = entry.startsWith(PREFIX) ? parseOwner(entry.slice(PREFIX.length)) : undefined;
      if (!owner || owner.scope !== scope) continue;
      const dir = join(parent, entry);
      const state = ownerState(owner);
      if (state === 'self') continue;
      if (state === 'alive') {
        out.live.push(owner);
        continue;
      }
      if (state === 'unknown') {
        out.unknown.push(dir);
        continue;
      }
      const cg: TrialCgroup = {
        dirs: [dir],
        procsFiles: [join(dir, 'cgroup.procs')],
        ...(parent === host.unified?.dir ? { unified: dir } : {}),
        ...(parent === host.freezer ? { freezer: dir } : {}),
        // The owner's start: nothing of its trials started earlier.
        minStartTicks: owner.start,
      };
      out.killed += cgroupMembers(cg).length;
      killTrialCgroup(cg);
      removeTrialCgroup(cg);
    }
  }
  return out;
}

function positive(n: number | null): number | null {
  return n !== null && n > 0 ? n : null;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function tryWrite(path: string, value: string): boolean {
  try {
    writeFileSync(path, value);
    return true;
  } catch {
    return false;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Blocks for `ms` (the kill must be synchronous: it also runs on a hard exit). */
function sleepMs(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
