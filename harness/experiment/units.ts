// Sizes ("2.5GiB") and durations ("90s") as people write them in experiment files.

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};
export const SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)\s*$/i;

/** Bytes from a number of bytes or a string such as "2.5GiB" or "800MB"; undefined when unreadable. */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
  const m = SIZE_PATTERN.exec(value);
  if (!m) return undefined;
  const bytes = Math.floor(Number(m[1]) * SIZE_UNITS[m[2]!.toLowerCase()]!);
  return bytes > 0 ? bytes : undefined;
}

const TIME_UNITS: Record<string, number> = { ms: 1e-3, s: 1, m: 60, min: 60, h: 3600 };
export const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)\s*$/i;

/** Seconds from a number of seconds or a string such as "90s", "2m" or "50ms". */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value : undefined;
  const m = DURATION_PATTERN.exec(value);
  if (!m) return undefined;
  const seconds = Number(m[1]) * TIME_UNITS[m[2]!.toLowerCase()]!;
  return seconds > 0 ? seconds : undefined;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 2)} ${units[i]}`;
}

export function formatSeconds(seconds: number): string {
  if (seconds < 1) return `${(seconds * 1000).toFixed(1)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.round(seconds - m * 60)).padStart(2, '0')}s`;
}
