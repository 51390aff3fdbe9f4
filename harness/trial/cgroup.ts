// A trial's own cgroups, nested under the harness's: its processes cannot leave them, its memory is
// capped as a whole, and it ends by killing every member (cgroup.kill on v2; freeze, kill, thaw on v1).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memoryCgroupVersion, type CgroupHost } from './cgroup-host.js';
import { procStat, signalAll } from './pids.js';

export interface TrialCgroup {
  /** Every directory made for the trial, one per hierarchy. */
  dirs: string[];
  /** The cgroup.procs files the trial's first process joins before it runs the workload. */
  procsFiles: string[];
  /** Which hierarchy caps memory (and so where the peak and OOM kills are read), if any. */
  memory?: { version: 'v2' | 'v1'; dir: string };
  unified?: string;
  freezer?: string;
  /** Processes that started before this are not the trial's (moved in from outside). */
  minStartTicks: number;
}

/** The name prefix of every cgroup tunebench makes: tunebench-<harness pid>.<its start ticks>.<label>. */
const PREFIX = 'tunebench-';

function ownTag(): string {
  return `${process.pid}.${procStat(process.pid)?.startTicks ?? 0}`;
}

/**
 * Makes the trial's cgroups. `memoryBytes` caps the tree where a memory cgroup can be made (null:
 * no cap, the cgroup only contains and measures).
 */
export function createTrialCgroup(host: CgroupHost, label: string, memoryBytes: number | null): TrialCgroup {
  const name = `${PREFIX}${ownTag()}.${label}`;
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
  if (version === 'v2') {
    writeFileSync(join(dir, 'memory.max'), value);
    tryWrite(join(dir, 'memory.swap.max'), '0');
  } else {
    writeFileSync(join(dir, 'memory.limit_in_bytes'), value);
    // memsw caps memory + swap; it must not be below limit_in_bytes (absent without swap accounting).
    tryWrite(join(dir, 'memory.memsw.limit_in_bytes'), value);
  }
}

/** The pids in the trial's cgroups now. */
export function cgroupMembers(cg: TrialCgroup): number[] {
  const out = new Set<number>();
  for (const f of cg.procsFiles) for (const line of readOr(f).split('\n')) if (line.trim()) out.add(Number(line));
  return [...out];
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

/** Removes the trial's cgroups (empty ones; a cgroup that still holds a process stays, and is named). */
export function removeTrialCgroup(cg: TrialCgroup): string[] {
  const left: string[] = [];
  for (const dir of [...cg.dirs].reverse()) {
    try {
      rmdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') left.push(dir);
    }
  }
  return left;
}

/**
 * Ends what a killed harness left behind: every tunebench cgroup whose owner (pid and start time in
 * its name) no longer runs is emptied and removed. Returns how many processes were killed.
 */
export function endOrphanedCgroups(host: CgroupHost): number {
  let killed = 0;
  const parents = [host.unified?.dir, host.memory, host.freezer].filter((d): d is string => d !== undefined);
  for (const parent of parents) {
    let entries: string[];
    try {
      entries = readdirSync(parent);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const m = /^tunebench-(\d+)\.(\d+)\./.exec(entry);
      if (!m || procStat(Number(m[1]))?.startTicks === Number(m[2])) continue;
      const dir = join(parent, entry);
      const cg: TrialCgroup = {
        dirs: [dir],
        procsFiles: [join(dir, 'cgroup.procs')],
        ...(parent === host.unified?.dir ? { unified: dir } : {}),
        ...(parent === host.freezer ? { freezer: dir } : {}),
        // The owner's start: nothing of its trials started earlier.
        minStartTicks: Number(m[2]),
      };
      killed += cgroupMembers(cg).length;
      killTrialCgroup(cg);
      removeTrialCgroup(cg);
    }
  }
  return killed;
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
