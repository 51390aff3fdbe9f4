// The environment fingerprint stored with every run: host, CPU, memory, runtimes and the git commit.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Fingerprint } from '../domain/telemetry.js';
import { gpuInfo } from './nvidia-smi.js';
import { workloadStack } from './workload-stack.js';

export type { Fingerprint };

const require = createRequire(import.meta.url);

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The checkout's HEAD commit and top folder, in one git call; nulls outside a checkout (or before its first commit). */
function gitCheckout(cwd: string): { commit: string | null; root: string | null } {
  try {
    const [root, commit] = execFileSync('git', ['rev-parse', '--show-toplevel', 'HEAD'], {
      cwd,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim()
      .split('\n');
    return { commit: commit?.trim() || null, root: root?.trim() || null };
  } catch {
    return { commit: null, root: null };
  }
}

function osName(): string {
  try {
    return /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os.type();
  } catch {
    return os.type();
  }
}

/**
 * The environment of a run: this machine, tunebench's own versions and the git checkout at `cwd`; with
 * `python` (the workload's interpreter), that interpreter's stack too (workload-stack.ts).
 */
export function fingerprint(cwd = process.cwd(), python?: string): Fingerprint {
  const cpus = os.cpus();
  const git = gitCheckout(cwd);
  return {
    host: os.hostname(),
    os: osName(),
    kernel: os.release(),
    cpu: { model: cpus[0]?.model.trim() ?? 'unknown', cores: cpus.length },
    memory_bytes: os.totalmem(),
    gpu: gpuFingerprint(),
    versions: {
      tunebench: (require('../../../package.json') as { version: string }).version,
      node: process.versions.node,
      'onnxruntime-node': packageVersion('onnxruntime-node'),
    },
    git_commit: git.commit,
    git_root: git.root,
    ...(python !== undefined ? { workload: workloadStack(python) } : {}),
  };
}

function gpuFingerprint(): Fingerprint['gpu'] {
  const gpus = gpuInfo();
  const first = gpus[0];
  return first
    ? { name: first.name, driver: first.driver, memory_bytes: first.memory_bytes ?? 0, count: gpus.length }
    : null;
}
