// Noise warnings about a set of per-trial measurements. They are reported, never silently dropped:
// the values stay in every statistic.
import { interquartileRange, median, medianAbsoluteDeviation } from 'simple-statistics';

export interface NoiseWarning {
  kind: 'high-spread' | 'very-high-spread' | 'slow-first-trial' | 'outlier';
  message: string;
}

/** MAD outliers: more than this many scaled MADs (1.4826 x MAD estimates sigma) from the median. */
const OUTLIER_MADS = 3.5;

/**
 * `values` are per-trial figures in run order (e.g. samples/s), `higherIsBetter` says which
 * direction a slow first trial goes.
 */
export function noiseWarnings(label: string, values: readonly number[], higherIsBetter = true): NoiseWarning[] {
  const out: NoiseWarning[] = [];
  if (values.length < 3) return out;
  const m = median([...values]);
  if (m === 0) return out;
  const spread = interquartileRange([...values]) / Math.abs(m);
  if (spread >= 0.25)
    out.push({
      kind: 'very-high-spread',
      message:
        `${label}: IQR/median is ${(spread * 100).toFixed(0)}% (>= 25%): very noisy; ` +
        'results need many more trials or a quieter machine',
    });
  else if (spread >= 0.1)
    out.push({ kind: 'high-spread', message: `${label}: IQR/median is ${(spread * 100).toFixed(0)}% (>= 10%): noisy` });
  const rest = values.slice(1);
  const first = values[0]!;
  const restMin = Math.min(...rest);
  const restMax = Math.max(...rest);
  const slowFirst = higherIsBetter ? first < restMin && first < m * 0.9 : first > restMax && first > m * 1.1;
  if (slowFirst)
    out.push({
      kind: 'slow-first-trial',
      message:
        `${label}: the first trial (${fmt(first)}) is slower than every later one (median ${fmt(m)}): ` +
        'a cold start (caches, JIT, files); consider more warm-up steps',
    });
  const mad = medianAbsoluteDeviation([...values]) * 1.4826;
  if (mad > 0) {
    values.forEach((v, i) => {
      const k = Math.abs(v - m) / mad;
      if (k > OUTLIER_MADS)
        out.push({
          kind: 'outlier',
          message:
            `${label}: trial ${i + 1} (${fmt(v)}) is ${k.toFixed(1)} MADs from the median ${fmt(m)}; ` +
            'kept in the statistics',
        });
    });
  }
  return out;
}

function fmt(v: number): string {
  return Number(v.toPrecision(4)).toString();
}
