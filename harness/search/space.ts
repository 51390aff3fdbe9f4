// Parameter spaces: lists, integer ranges and powers of two, expanded into a grid of configs.
import type { Config, ParamValue } from '../domain/index.js';

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

/**
 * The cartesian product, in the order the parameters are listed (the last varies fastest).
 * `appliesWhen` names conditional parameters: { prefetch_factor: 'num_workers' } means that
 * prefetch_factor only matters when num_workers is non-zero (or true). Where it does not apply it
 * is left out of the config, and the configs that then coincide are run once.
 */
export function grid(
  params: Readonly<Record<string, ParamSpec>>,
  appliesWhen: Readonly<Record<string, string>> = {},
): Config[] {
  let configs: Config[] = [{}];
  for (const [name, spec] of Object.entries(params)) {
    const values = expandParam(spec);
    configs = configs.flatMap((c) => values.map((v) => ({ ...c, [name]: v })));
  }
  if (Object.keys(appliesWhen).length === 0) return configs;
  const names = Object.keys(params);
  const seen = new Set<string>();
  const out: Config[] = [];
  for (const c of configs) {
    const active: Config = {};
    for (const n of names) {
      const condition = appliesWhen[n];
      if (condition === undefined || isOn(c[condition])) active[n] = c[n]!;
    }
    const key = configKey(active, names);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(active);
    }
  }
  return out;
}

/** A condition holds for a non-zero number, true, or a non-empty string other than "false"/"0". */
function isOn(v: ParamValue | undefined): boolean {
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'boolean') return v;
  return v !== undefined && v !== '' && v !== 'false' && v !== '0';
}

/** "a=1 b=true"; parameters that a config leaves out (they do not apply) are not shown. */
export function configKey(config: Config, names: readonly string[]): string {
  return names
    .filter((n) => config[n] !== undefined)
    .map((n) => `${n}=${String(config[n])}`)
    .join(' ');
}
