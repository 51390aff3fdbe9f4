// Leaves out the parts of a chart that have nothing to draw: a layer or a panel whose rows hold no
// finite value for a quantitative position (a CI bar where no arm has a CI, a memory panel where no
// trial reported memory). Vega would draw them on an infinite scale ("values from Infinity to
// -Infinity") and warn; instead they are left out, and the report says which.
import type { VlSpec } from './spec.js';

type Row = Record<string, unknown>;
type Node = Record<string, unknown>;

export interface Pruned {
  /** The spec without its empty parts; null when nothing is left to draw. */
  spec: VlSpec | null;
  /** What was left out, e.g. "rule of low, high". */
  omitted: string[];
}

export function pruneEmpty(spec: VlSpec): Pruned {
  const omitted: string[] = [];
  return { spec: prune(spec, { data: undefined, encoding: {} }, omitted), omitted };
}

interface Scope {
  data: readonly Row[] | undefined;
  encoding: Node;
}

function prune(node: Node, scope: Scope, omitted: string[]): Node | null {
  const values = (node['data'] as { values?: unknown } | undefined)?.values;
  const data = Array.isArray(values) ? (values as Row[]) : scope.data;
  const encoding = { ...scope.encoding, ...((node['encoding'] as Node | undefined) ?? {}) };
  if (node['mark'] !== undefined) return unit(node, data, encoding, omitted);
  for (const key of ['layer', 'hconcat', 'vconcat', 'concat'] as const) {
    const children = node[key];
    if (!Array.isArray(children)) continue;
    // Layers share their parent's encoding; concatenated views do not.
    const inner = { data, encoding: key === 'layer' ? encoding : {} };
    const kept = (children as Node[]).flatMap((c) => prune(c, inner, omitted) ?? []);
    return kept.length > 0 ? { ...node, [key]: kept } : null;
  }
  if (node['facet'] !== undefined && node['spec'] !== undefined) {
    const inner = prune(node['spec'] as Node, { data, encoding: {} }, omitted);
    return inner ? { ...node, spec: inner } : null;
  }
  return node;
}

function unit(node: Node, data: readonly Row[] | undefined, encoding: Node, omitted: string[]): Node | null {
  const fields = quantitativeFields(encoding);
  if (fields.length === 0) return node;
  const drawable = (data ?? []).some((row) => fields.every((f) => Number.isFinite(row[f])));
  if (drawable) return node;
  const mark = node['mark'];
  const type = typeof mark === 'string' ? mark : String((mark as Node)['type']);
  omitted.push(`${type} of ${fields.join(', ')}`);
  return null;
}

/** The fields on a quantitative x or y, with their x2 / y2. */
function quantitativeFields(encoding: Node): string[] {
  const fields: string[] = [];
  for (const [main, second] of [
    ['x', 'x2'],
    ['y', 'y2'],
  ] as const) {
    const def = encoding[main] as Node | undefined;
    if (def?.['type'] !== 'quantitative' || typeof def['field'] !== 'string') continue;
    fields.push(def['field']);
    const end = (encoding[second] as Node | undefined)?.['field'];
    if (typeof end === 'string') fields.push(end);
  }
  return fields;
}
