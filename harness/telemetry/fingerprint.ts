// The environment fingerprint stored with every run: host, CPU, memory, runtimes and the git commit.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Fingerprint } from '../domain/telemetry.js';
import { gpuInfo } from './nvidia-smi.js';

export type { Fingerprint };

const require = createRequire(import.meta.url);

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function gitCommit(cwd: string): string | null {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || null
    );
  } catch {
    return null;
  }
}

function osName(): string {
  try {
    return /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os.type();
  } catch {
    return os.type();
  }
}

export function fingerprint(cwd = process.cwd()): Fingerprint {
  const cpus = os.cpus();
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
    git_commit: gitCommit(cwd),
  };
}

function gpuFingerprint(): Fingerprint['gpu'] {
  const gpus = gpuInfo();
  const first = gpus[0];
  return first
    ? { name: first.name, driver: first.driver, memory_bytes: first.memory_bytes ?? 0, count: gpus.length }
    : null;
}
