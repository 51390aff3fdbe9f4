// The system packages some tests need (Python, Debian's PyTorch, Chromium, SLURM, root for tmpfs
// mounts): one place that checks them, once per process, and says how to install what is missing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { cgroupHost, memoryCgroupVersion } from '../../harness/trial/cgroup-host.js';
import { hasPrlimit } from '../../harness/trial/limits.js';

export const PYTHON = '/usr/bin/python3';
export const CHROMIUM = '/usr/bin/chromium';
export const MYPY = '/usr/bin/mypy';

/** How the tests see each Debian package: a probe of what they use from it. */
const PACKAGES = {
  python3: () => executable(PYTHON),
  'python3-pip': () => python('import pip'),
  'python3-setuptools': () => python('import setuptools'),
  mypy: () => executable(MYPY),
  // An empty torch folder imports as a namespace package: only a working torch counts.
  'python3-torch': () => python('import torch; torch.zeros(1)'),
  chromium: () => executable(CHROMIUM),
  'slurm-wlm': () => ['slurmctld', 'slurmd', 'sbatch', 'squeue', 'scontrol', 'sinfo'].every(onPath),
  munge: () => onPath('munged'),
  // test/slurm/cluster.sh finds and stops the daemons with pgrep and pkill.
  procps: () => onPath('pgrep') && onPath('pkill'),
  mount: () => onPath('mount') && onPath('umount'),
  'util-linux': hasPrlimit,
  'xz-utils': () => onPath('xz'),
  gcc: () => onPath('gcc'),
  'libc6-dev': () => existsSync('/usr/include/stdio.h'),
} satisfies Record<string, () => boolean>;

type Package = keyof typeof PACKAGES;

interface Need {
  /** The Debian packages it takes; the message names the missing ones. */
  packages: readonly Package[];
  /** What the tests use it for, in a few words. */
  what: string;
  /** Whether it also takes root (mounts, daemons, /etc/slurm). */
  root?: boolean;
  /** What must also hold beyond the packages, checked after them. */
  probe?: () => boolean;
}

const NEEDS = {
  python3: { packages: ['python3'], what: 'Python at /usr/bin/python3' },
  pip: { packages: ['python3', 'python3-pip', 'python3-setuptools'], what: 'pip and setuptools for /usr/bin/python3' },
  mypy: { packages: ['mypy'], what: "Debian's mypy at /usr/bin/mypy, to type-check the Python adapter" },
  torch: { packages: ['python3-torch'], what: "Debian's PyTorch for /usr/bin/python3" },
  chromium: { packages: ['chromium'], what: 'headless Chromium at /usr/bin/chromium, driven by playwright-core' },
  slurm: {
    packages: ['slurm-wlm', 'munge', 'procps'],
    what: 'a single-node SLURM cluster, started by test/slurm/cluster.sh',
    root: true,
  },
  tmpfs: { packages: ['mount'], what: 'tmpfs mounts for the storage faults', root: true },
  prlimit: { packages: ['util-linux'], what: 'prlimit, for per-trial memory caps' },
  xz: { packages: ['xz-utils'], what: 'xz, to pack and unpack the portable bundle' },
  cc: { packages: ['gcc', 'libc6-dev'], what: 'a C compiler, to build a library that a fault test preloads' },
  cgroup: {
    packages: [],
    what: 'cgroups the tests may nest under their own (a memory cgroup, v2 or v1, as on these machines)',
    root: true,
    probe: () => memoryCgroupVersion(cgroupHost()) !== undefined,
  },
} as const satisfies Record<string, Need>;

export type SystemNeed = keyof typeof NEEDS;

const present = new Map<Package, boolean>();
const reasons = new Map<SystemNeed, string | undefined>();

/**
 * node:test's `skip` value for a test that needs `need`: undefined when the machine has it, else one
 * line naming what is missing and how to install it. Under CI=true a missing need throws that line
 * instead, so the suite or file that asks fails rather than skips.
 */
export function requireSystem(need: SystemNeed, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const reason = missing(need);
  if (reason !== undefined && env['CI'] === 'true')
    throw new Error(`CI=true, and the test ${reason} (outside CI it would be skipped)`);
  return reason;
}

/** What is missing for `need`, as the skip line says it; undefined when nothing is. */
export function missing(need: SystemNeed): string | undefined {
  if (!reasons.has(need)) reasons.set(need, reasonFor(NEEDS[need]));
  return reasons.get(need);
}

function reasonFor(need: Need): string | undefined {
  const root = process.getuid?.() === 0;
  const lacking = need.packages.filter((p) => !isPresent(p));
  if (lacking.length > 0)
    return (
      `needs ${listed(lacking)} (${need.what}): run npm run setup:system, ` +
      `or ${root ? '' : 'sudo '}apt-get install ${lacking.join(' ')}`
    );
  if (need.root && !root) return `needs root (${need.what}): run the tests as root, as .ci/run does`;
  if ('probe' in need && need.probe && !need.probe())
    return `needs ${need.what}: none can be made here (a read-only /sys/fs/cgroup, or no memory controller)`;
  return undefined;
}

function isPresent(p: Package): boolean {
  if (!present.has(p)) present.set(p, PACKAGES[p]());
  return present.get(p)!;
}

const listed = (names: readonly string[]): string =>
  names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

// sbin folders too: slurmctld and munged live there, and a user's PATH often lacks them.
const SEARCH = [
  ...(process.env['PATH'] ?? '').split(delimiter).filter(Boolean),
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
];

function onPath(command: string): boolean {
  return SEARCH.some((dir) => executable(join(dir, command)));
}

function python(code: string): boolean {
  if (!isPresent('python3')) return false;
  return spawnSync(PYTHON, ['-c', code], { stdio: 'ignore', timeout: 120_000 }).status === 0;
}
