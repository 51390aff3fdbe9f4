// Parameter spaces: lists, integer ranges and powers of two, expanded into a grid of configs.
import type { Config } from '../trial/record.js';
import type { ParamValue } from '../experiment/schema.js';

export type ParamSpec = ParamValue[] | { range: [number, number]; step?: number } | { pow2: [number, number] };

export function expandParam(spec: ParamSpec): ParamValue[] {
  if (Array.isArray(spec)) return [...new Set(spec)];
  if ('range' in spec) {
    const [lo, hi] = spec.range;
    const step = spec.step ?? 1;
    const out: number[] = [];
    for (let v = lo; v <= hi + 1e-9; v += step) out.push(Number(v.toFixed(10)));
    return out;
  }
  const [lo, hi] = spec.pow2;
  const out: number[] = [];
  for (let v = 2 ** Math.ceil(Math.log2(lo)); v <= hi; v *= 2) out.push(v);
  return out;
}

/** The cartesian product, in the order the parameters are listed (the last varies fastest). */
export function grid(params: Readonly<Record<string, ParamSpec>>): Config[] {
  let configs: Config[] = [{}];
  for (const [name, spec] of Object.entries(params)) {
    const values = expandParam(spec);
    configs = configs.flatMap((c) => values.map((v) => ({ ...c, [name]: v })));
  }
  return configs;
}

export function configKey(config: Config, names: readonly string[]): string {
  return names.map((n) => `${n}=${String(config[n])}`).join(' ');
}
