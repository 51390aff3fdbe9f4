// Enforcing the per-trial memory cap: a memory cgroup (v2, else v1) where one can be made, else prlimit --as.
import type { Owner } from './owner.js';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { LimitMechanism } from '../domain/index.js';
import { canContain, cgroupHost, memoryCgroupVersion, memoryCgroupWhy } from './cgroup-host.js';
import { createTrialCgroup, type TrialCgroup } from './cgroup.js';

export type MechanismChoice = 'auto' | 'prlimit' | 'cgroup' | 'none';

/**
 * Whether the workload's processes may start CUDA: `declared` (a parameter device or execution_provider
 * is cuda), `possible` (a program of the user's on a machine with a GPU), `none`.
 */
export type CudaUse = 'declared' | 'possible' | 'none';

const PRLIMIT_WITH_CUDA =
  'limits.mechanism is "prlimit" with a CUDA device: an address-space cap stops CUDA processes (the driver ' +
  "reserves address space far beyond the card's memory; torch cannot even load), so it is refused. With CUDA, " +
  'limits.memory is host memory, enforced by a memory cgroup: set limits.mechanism: auto (or cgroup), or remove limits.memory';

export interface MemoryLimit {
  mechanism: LimitMechanism;
  bytes: number | null;
  /** Prefix for the command's argv (prlimit), empty otherwise. */
  prefix: string[];
  /**
   * Whether the trial runs in cgroups of its own (made at launch): it then ends by killing them, and
   * under a cgroup mechanism they cap its memory. False where no cgroup can be made here.
   */
  contained: boolean;
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

/**
 * Decides how the cap is enforced: a memory cgroup of the trial's own (v2, else v1) where one can be
 * nested under the harness's cgroup, else prlimit --as. Throws when the requested mechanism is unavailable.
 * Containment (the trial's own cgroups, killed as a whole) is used wherever cgroups can be made,
 * whatever caps memory.
 */
export function planLimit(
  bytes: number | undefined,
  choice: MechanismChoice,
  host = cgroupHost(),
  cuda: CudaUse = 'none',
): MemoryLimit {
  const contained = canContain(host);
  if (bytes === undefined || choice === 'none') return { mechanism: 'none', bytes: null, prefix: [], contained };
  if (choice === 'prlimit' && cuda === 'declared') throw new Error(PRLIMIT_WITH_CUDA);
  const version = choice === 'prlimit' ? undefined : memoryCgroupVersion(host);
  if (version !== undefined) return { mechanism: `cgroup-${version}`, bytes, prefix: [], contained };
  // An address-space cap is never put on a process that may start CUDA: the driver reserves address
  // space far beyond the card's memory, and torch cannot even load under a few GiB of it.
  if (cuda !== 'none' && choice === 'auto')
    throw new Error(
      `limits.memory is host memory and on a GPU it needs a memory cgroup, which cannot be made here (${memoryCgroupWhy(host)}); ` +
        'an address-space cap (prlimit --as) stops CUDA processes (torch: "failed to map segment from shared object"). ' +
        'Remove limits.memory (the card is the cap on the device), run tunebench as root in a cgroup whose memory ' +
        `controller can be enabled${cuda === 'possible' ? ', or, if this workload does not use the GPU, set limits.mechanism: prlimit' : ''}`,
    );
  if (choice === 'cgroup')
    throw new Error(
      'limits.mechanism is "cgroup" but no memory cgroup can be made here (cgroup v2 with the memory ' +
        "controller, or a v1 memory hierarchy, writable under this process's own cgroup: root or a delegated " +
        'subtree); use "prlimit" or "auto"',
    );
  const prlimit = prlimitPath();
  if (prlimit === undefined)
    throw new Error(
      'limits.memory needs prlimit (util-linux) or a writable memory cgroup; install util-linux or remove limits.memory',
    );
  return { mechanism: 'prlimit-as', bytes, prefix: [prlimit, `--as=${bytes}`, '--'], contained };
}

/** Whether the mechanism caps the whole process tree's memory (a cgroup) rather than each process. */
export function capsTree(mechanism: LimitMechanism): boolean {
  return mechanism === 'cgroup-v2' || mechanism === 'cgroup-v1';
}

/** Makes the trial's cgroups (with the cap under a cgroup mechanism); undefined when the trial is not contained. */
export function trialCgroup(
  limit: MemoryLimit,
  owner: Owner,
  label: string,
  pids?: number,
  host = cgroupHost(),
): TrialCgroup | undefined {
  if (!limit.contained) return undefined;
  return createTrialCgroup(host, owner, label, capsTree(limit.mechanism) ? limit.bytes : null, pids);
}
