// Parameter spaces: lists, integer ranges and powers of two, expanded into a grid of configs.
import type { Frozen } from '../util/frozen.js';
import type { Config, ParamValue } from '../domain/index.js';
import { gridSize, MAX_SWEEP_CONFIGS, paramAxis, type ParamSpec } from '../experiment/grid-size.js';

export { gridSize, MAX_SWEEP_CONFIGS, type ParamSpec };

/** Every value of one spec (a list's repeats once); only for specs whose count is known to be small. */
export function expandParam(spec: Frozen<ParamSpec>): ParamValue[] {
  const axis = paramAxis(spec);
  return Array.from({ length: axis.count }, (_, i) => axis.at(i));
}

/**
 * The cartesian product, lazily, in the order the parameters are listed (the last varies fastest):
 * each config is made from its index, so a large grid is never held in memory. `appliesWhen` names
 * conditional parameters: { prefetch_factor: 'num_workers' } means that prefetch_factor only matters
 * when num_workers is non-zero (or true). Where it does not apply it is left out of the config, and
 * the configs that then coincide are yielded once.
 */
export function* gridConfigs(
  params: Frozen<Record<string, ParamSpec>>,
  appliesWhen: Readonly<Record<string, string>> = {},
): Generator<Config> {
  const names = Object.keys(params);
  const axes = Object.values(params).map(paramAxis);
  const total = axes.reduce((n, a) => n * a.count, 1);
  const conditional = Object.keys(appliesWhen).length > 0;
  const seen = new Set<string>();
  for (let index = 0; index < total; index++) {
    const full: Config = {};
    let rest = index;
    for (let j = names.length - 1; j >= 0; j--) {
      const axis = axes[j]!;
      full[names[j]!] = axis.at(rest % axis.count);
      rest = Math.floor(rest / axis.count);
    }
    if (!conditional) {
      yield full;
      continue;
    }
    const active: Config = {};
    for (const n of names) {
      const condition = appliesWhen[n];
      if (condition === undefined || isOn(full[condition])) active[n] = full[n]!;
    }
    const key = configKey(active, names);
    if (seen.has(key)) continue;
    seen.add(key);
    yield active;
  }
}

/**
 * The configs of a sweep as a list. Validation refuses a grid above MAX_SWEEP_CONFIGS; one that gets
 * here all the same is a harness bug, stopped before it fills the memory.
 */
export function grid(
  params: Frozen<Record<string, ParamSpec>>,
  appliesWhen: Readonly<Record<string, string>> = {},
): Config[] {
  const { total } = gridSize(params);
  if (total > MAX_SWEEP_CONFIGS)
    throw new RangeError(`a sweep grid of ${total} configs (the limit is ${MAX_SWEEP_CONFIGS}) got past validation`);
  return [...gridConfigs(params, appliesWhen)];
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
