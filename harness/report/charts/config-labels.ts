// Short axis labels for a stage's configs: only the parameters that vary in the stage, each as
// name=value, with the names abbreviated (and a legend) when full names would make long labels.
// Every label names one config: the ranked and stall charts must tell configs apart.
import type { ParamValue } from '../../domain/index.js';

/** Labels up to this many characters keep full parameter names (vega's default label limit is 180 px). */
export const FULL_NAMES_MAX_CHARS = 32;

export interface ConfigLabels {
  /** One label per config, in the order given; unique. */
  labels: string[];
  /** Abbreviation to parameter name, for a legend; empty when the labels use full names. */
  legend: [string, string][];
  /** The longest label in characters, to size the axis. */
  longest: number;
}

/** `configs[i][p]` undefined means that p does not apply to config i (applies_when); it is left out of the label. */
export function configLabels(
  params: readonly string[],
  configs: readonly Readonly<Record<string, ParamValue | undefined>>[],
): ConfigLabels {
  const shown = (v: ParamValue | undefined) => (v === undefined ? undefined : String(v));
  const differ = params.filter((p) => new Set(configs.map((c) => shown(c[p]))).size > 1);
  const varying = differ.length > 0 ? differ : params;
  const build = (names: ReadonlyMap<string, string>) =>
    configs.map((c) =>
      varying.flatMap((p) => (c[p] === undefined ? [] : [`${names.get(p)}=${shown(c[p])}`])).join(' '),
    );
  let names = new Map(varying.map((p) => [p, p]));
  let labels = build(names);
  let legend: [string, string][] = [];
  if (Math.max(0, ...labels.map((l) => l.length)) > FULL_NAMES_MAX_CHARS) {
    names = abbreviations(varying);
    labels = build(names);
    legend = varying.filter((p) => names.get(p) !== p).map((p) => [names.get(p)!, p]);
  }
  labels = unique(labels.map((l) => l || '(defaults)'));
  return { labels, legend, longest: Math.max(0, ...labels.map((l) => l.length)) };
}

/**
 * The initials of each name's words (num_workers -> nw, prefetch_factor -> pf); where two names
 * would share an abbreviation, both keep their full name.
 */
export function abbreviations(params: readonly string[]): Map<string, string> {
  const short = new Map(
    params.map((p) => [
      p,
      p
        .split(/[_\W]+/)
        .filter(Boolean)
        .map((w) => w[0]!.toLowerCase())
        .join('') || p,
    ]),
  );
  const count = new Map<string, number>();
  for (const s of short.values()) count.set(s, (count.get(s) ?? 0) + 1);
  // An abbreviation may not be another parameter's full name either.
  for (const [p, s] of short) if (count.get(s)! > 1 || (s !== p && params.includes(s))) short.set(p, p);
  return short;
}

/** Appends " #2", " #3" to repeated labels (configs whose shown values coincide, e.g. "1" and 1). */
function unique(labels: readonly string[]): string[] {
  const used = new Set<string>();
  return labels.map((l) => {
    let label = l;
    for (let n = 2; used.has(label); n++) label = `${l} #${n}`;
    used.add(label);
    return label;
  });
}
