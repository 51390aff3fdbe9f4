// The size of a sweep's grid, counted from its parameter specs without listing a single config, so that
// validation can refuse a grid too large to run before anything is built.
import type { Frozen } from '../util/frozen.js';
import type { ParamValue } from '../domain/index.js';

export type ParamSpec = ParamValue[] | { range: [number, number]; step?: number } | { pow2: [number, number] };

/**
 * The most configs one sweep stage may have (before `applies_when` merges any). Every config runs at
 * least one trial of at least a second, so 10 000 configs are already hours; a larger grid is a
 * mistake in the file (a range without a step, a parameter too many), not a plan.
 */
export const MAX_SWEEP_CONFIGS = 10_000;

/** Room for rounding in a range's last value: [0, 0.3] by 0.1 ends at 0.30000000000000004. */
const RANGE_SLACK = 1e-9;

/** One parameter's values as a count and a lookup by index: a range is never listed. */
export interface ParamAxis {
  count: number;
  at: (index: number) => ParamValue;
}

/** A spec that lists its values (Array.isArray does not narrow a readonly array). */
const isList = (spec: Frozen<ParamSpec>): spec is Frozen<Extract<ParamSpec, unknown[]>> => Array.isArray(spec);

export function paramAxis(spec: Frozen<ParamSpec>): ParamAxis {
  if (isList(spec)) {
    const values = [...new Set(spec)];
    return { count: values.length, at: (i) => values[i]! };
  }
  if ('range' in spec) {
    const [lo = 0, hi = -1] = spec.range;
    const step = spec.step ?? 1;
    const count = hi < lo ? 0 : Math.floor((hi - lo + RANGE_SLACK) / step) + 1;
    return { count, at: (i) => Number((lo + i * step).toFixed(10)) };
  }
  const exponents = pow2Exponents(spec.pow2);
  return { count: exponents.length, at: (i) => 2 ** exponents[i]! };
}

/** How many values a spec gives (list entries once each), computed, not listed. */
export function paramCount(spec: Frozen<ParamSpec>): number {
  return paramAxis(spec).count;
}

/** Exponents k with lo <= 2^k <= hi: at most about 2100 of them, whatever the bounds. */
function pow2Exponents(bounds: readonly number[]): number[] {
  const [lo = 1, hi = 0] = bounds;
  const out: number[] = [];
  for (let k = Math.ceil(Math.log2(lo)); 2 ** k <= hi && Number.isFinite(2 ** k); k++) out.push(k);
  return out;
}

/** Each parameter's count and their product (the number of configs before `applies_when`). */
export function gridSize(params: Frozen<Record<string, ParamSpec>>): { counts: number[]; total: number } {
  const counts = Object.values(params).map(paramCount);
  return { counts, total: counts.reduce((a, b) => a * b, 1) };
}

/** The validation message for a grid above MAX_SWEEP_CONFIGS, or undefined. */
export function gridTooLarge(params: Frozen<Record<string, ParamSpec>>): string | undefined {
  const { counts, total } = gridSize(params);
  if (total <= MAX_SWEEP_CONFIGS) return undefined;
  const product = counts.length > 1 ? `${counts.join(' x ')} = ` : '';
  return (
    `the grid has ${product}${total} configs, more than the ${MAX_SWEEP_CONFIGS} a sweep may have ` +
    '(each config runs at least one trial, and a budget would stop the sweep before it saw most of them); ' +
    'sweep fewer values (a coarser range step, pow2 instead of range, a short list), or split the parameters ' +
    'over several sweep stages (each later stage starts from the values the earlier ones chose)'
  );
}
