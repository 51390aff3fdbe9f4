// NVIDIA GPU telemetry through nvidia-smi's CSV queries; N/A fields become null.
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Fields sampled while a trial runs, in this order. */
export const GPU_QUERY = 'index,name,utilization.gpu,memory.used,memory.total,power.draw,clocks.sm';
/** Fields of the environment fingerprint. */
export const GPU_INFO_QUERY = 'name,driver_version,memory.total';

export interface GpuSample {
  index: number;
  name: string;
  utilization_pct: number | null;
  memory_used_bytes: number | null;
  memory_total_bytes: number | null;
  power_watts: number | null;
  sm_clock_mhz: number | null;
}

export interface GpuInfo {
  name: string;
  driver: string;
  memory_bytes: number | null;
}

const MIB = 2 ** 20;

/** The path of nvidia-smi on PATH, or undefined. */
export function findNvidiaSmi(path = process.env['PATH'] ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'nvidia-smi');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function num(field: string | undefined): number | null {
  if (field === undefined) return null;
  const v = field.trim();
  if (v === '' || /^\[?(N\/A|Not Supported|Unknown Error|Insufficient Permissions)\]?$/i.test(v)) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Parses `--query-gpu=GPU_QUERY --format=csv,noheader,nounits` output; skips lines it cannot read. */
export function parseGpuSamples(text: string): GpuSample[] {
  const out: GpuSample[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(',').map((x) => x.trim());
    if (f.length < 7) continue;
    const index = num(f[0]);
    if (index === null) continue;
    const mem = (x: string | undefined) => {
      const v = num(x);
      return v === null ? null : v * MIB;
    };
    out.push({
      index,
      name: f[1]!,
      utilization_pct: num(f[2]),
      memory_used_bytes: mem(f[3]),
      memory_total_bytes: mem(f[4]),
      power_watts: num(f[5]),
      sm_clock_mhz: num(f[6]),
    });
  }
  return out;
}

export function parseGpuInfo(text: string): GpuInfo[] {
  return text
    .split('\n')
    .map((l) => l.split(',').map((x) => x.trim()))
    .filter((f) => f.length >= 3 && f[0])
    .map((f) => ({ name: f[0]!, driver: f[1]!, memory_bytes: num(f[2]) === null ? null : num(f[2])! * MIB }));
}

/** GPU name, driver and memory for the fingerprint; empty without nvidia-smi or when it fails. */
export function gpuInfo(): GpuInfo[] {
  const smi = findNvidiaSmi();
  if (!smi) return [];
  try {
    return parseGpuInfo(
      execFileSync(smi, [`--query-gpu=${GPU_INFO_QUERY}`, '--format=csv,noheader,nounits'], {
        timeout: 5000,
        stdio: ['ignore', 'pipe', 'ignore'],
      }).toString(),
    );
  } catch {
    return [];
  }
}
