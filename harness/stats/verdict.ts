// Verdicts from a ratio's confidence interval: a change counts only when the whole CI lies
// outside a noise band around 1, so a tiny but "significant" drift is not called a change.
import type { Interval, MemoryVerdict, SpeedVerdict } from '../domain/index.js';

export type Direction = 'higher' | 'lower' | 'same';

/** higher: CI above 1 + band; lower: CI below 1 - band; same otherwise (including no CI). */
export function direction(ratio: Interval | null, band: number): Direction {
  if (!ratio) return 'same';
  if (ratio.low > 1 + band) return 'higher';
  if (ratio.high < 1 - band) return 'lower';
  return 'same';
}

/** The direction of a throughput change (arm / baseline) as a verdict: higher throughput is faster. */
export function speedVerdict(d: Direction): SpeedVerdict {
  return d === 'higher' ? 'faster' : d === 'lower' ? 'slower' : 'no significant difference';
}

/** The direction of a peak-memory change (arm / baseline) as a verdict. */
export function memoryVerdict(d: Direction): MemoryVerdict {
  return d === 'higher' ? 'more memory' : d === 'lower' ? 'less memory' : 'no significant difference';
}
