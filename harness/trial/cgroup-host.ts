// Where this process may create cgroups: its own cgroup in each mounted hierarchy (read from
// /proc/self/cgroup and /proc/self/mountinfo), nested creation only, never a move out of its own.
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The directories under which the harness may nest trial cgroups; absent where not writable. */
export interface CgroupHost {
  /** cgroup v2: the harness's own cgroup (kill with cgroup.kill; a cap when it has the memory controller). */
  unified?: {
    dir: string;
    memory: boolean;
    /** Why the memory controller cannot cap trials here, when it cannot. */ why?: string;
    /** The pids controller is enabled for trial cgroups (pids.max). */
    pids?: boolean;
  };
  /** cgroup v1 memory controller: the harness's own memory cgroup (the cap of the tree). */
  memory?: string;
  /** cgroup v1 freezer: freezes a trial so that it cannot fork while it is killed. */
  freezer?: string;
  /** cgroup v1 pids controller: caps a trial's processes and threads (pids.max). */
  pids?: string;
}

interface Mount {
  root: string;
  point: string;
  type: 'cgroup' | 'cgroup2';
  options: string[];
}

/** Cgroup mounts from mountinfo: "id parent major:minor root point opts ... - type source superopts". */
export function cgroupMounts(mountinfo: string): Mount[] {
  const out: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const l = left.split(' ');
    const [type, , superOptions] = right.split(' ');
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    out.push({ root: l[3] ?? '/', point: unescapeMount(l[4] ?? ''), type, options: (superOptions ?? '').split(',') });
  }
  return out;
}

/** Own cgroup paths from /proc/self/cgroup: controller list ('' for v2) -> path. */
export function ownCgroups(selfCgroup: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of selfCgroup.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The harness's own directory in a mount (the path is relative to the cgroup namespace's root). */
function ownDir(mount: Mount, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const rel = mount.root !== '/' && path.startsWith(mount.root) ? path.slice(mount.root.length) : path;
  return join(mount.point, rel);
}

/** Whether a child cgroup can be made under dir: made and removed once (root, or a delegated subtree). */
function canNest(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    const probe = join(dir, `tunebench-probe-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

let cached: CgroupHost | undefined;

/** Set to "off", trials run without cgroups (the prlimit cap and the process-tree containment). */
export const CGROUPS_ENV = 'TUNEBENCH_CGROUPS';

/** The cgroups this process may nest trials under (probed once per process; none with TUNEBENCH_CGROUPS=off). */
export function cgroupHost(): CgroupHost {
  if (process.env[CGROUPS_ENV] === 'off') return {};
  cached ??= probeHost();
  return cached;
}

function probeHost(): CgroupHost {
  let mounts: Mount[];
  let own: Map<string, string>;
  try {
    mounts = cgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8'));
    own = ownCgroups(readFileSync('/proc/self/cgroup', 'utf8'));
  } catch {
    return {};
  }
  const host: CgroupHost = {};
  const v2 = mounts.find((m) => m.type === 'cgroup2');
  const v2Dir = v2 && ownDir(v2, own.get(''));
  if (v2Dir && existsSync(join(v2Dir, 'cgroup.procs')) && canNest(v2Dir)) {
    host.unified = { dir: v2Dir, ...enableMemory(v2Dir), ...(enablePids(v2Dir) ? { pids: true } : {}) };
  }
  for (const controller of ['memory', 'freezer', 'pids'] as const) {
    const mount = mounts.find((m) => m.type === 'cgroup' && m.options.includes(controller));
    const path = [...own.entries()].find(([names]) => names.split(',').includes(controller))?.[1];
    const dir = mount && ownDir(mount, path);
    if (dir && canNest(dir)) host[controller] = dir;
  }
  return host;
}

/**
 * The v2 memory controller for the trial cgroups under dir: enabled in dir's cgroup.subtree_control, or
 * enabled there now when dir has it (cgroup.controllers) and may pass it on. cgroup v2 lets a cgroup that
 * holds processes (other than the root) pass no controller to its children, so where tunebench runs in
 * such a cgroup the answer says so.
 */
function enableMemory(dir: string): { memory: boolean; why?: string } {
  const has = (file: string) => /\bmemory\b/.test(readOr(join(dir, file)));
  if (has('cgroup.subtree_control')) return { memory: true };
  if (!has('cgroup.controllers'))
    return { memory: false, why: `the memory controller is not available to ${dir} (cgroup.controllers)` };
  try {
    writeFileSync(join(dir, 'cgroup.subtree_control'), '+memory');
    return { memory: has('cgroup.subtree_control') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      memory: false,
      why:
        `the memory controller is available to ${dir} but not enabled for its children, and enabling it failed (${code ?? 'error'}` +
        `${code === 'EBUSY' ? ': the cgroup holds processes, and cgroup v2 then passes no controller on; run tunebench in a cgroup of its own, e.g. systemd-run --scope -p Delegate=yes' : ''})`,
    };
  }
}

/** The v2 pids controller for the trial cgroups under dir: enabled there already, or now where it may be. */
function enablePids(dir: string): boolean {
  const has = (file: string) => /\bpids\b/.test(readOr(join(dir, file)));
  if (has('cgroup.subtree_control')) return true;
  if (!has('cgroup.controllers')) return false;
  try {
    writeFileSync(join(dir, 'cgroup.subtree_control'), '+pids');
  } catch {
    return false;
  }
  return has('cgroup.subtree_control');
}

/** Why no memory cgroup can cap trials here, in words. */
export function memoryCgroupWhy(host: CgroupHost): string {
  if (host.unified?.why) return host.unified.why;
  if (host.unified === undefined && host.memory === undefined)
    return "no cgroup v2 or v1 memory hierarchy is writable under this process's own cgroup (not root, or not delegated)";
  return "no memory controller under this process's cgroup";
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Which cgroup caps memory: v2 with its memory controller, else v1 memory; undefined when neither. */
export function memoryCgroupVersion(host: CgroupHost): 'v2' | 'v1' | undefined {
  if (host.unified?.memory) return 'v2';
  if (host.memory) return 'v1';
  return undefined;
}

/** Whether a trial can be contained at all (a cgroup it cannot leave, killed as a whole). */
export function canContain(host: CgroupHost): boolean {
  return host.unified !== undefined || host.freezer !== undefined || host.memory !== undefined;
}
