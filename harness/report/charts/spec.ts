// What every chart builder returns: a named Vega-Lite v6 spec with its data inline, so that each
// charts/<name>.vl.json opens in the Vega editor as it is.

export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

export type VlSpec = Record<string, unknown>;

export interface Chart {
  /** File name without extension: charts/<name>.vl.json and charts/<name>.svg. */
  name: string;
  title: string;
  spec: VlSpec;
}

/** Numbers rounded to 4 significant digits, so that specs are compact and stable. */
export function round(v: number | null | undefined, digits = 4): number | null {
  if (v === null || v === undefined || !Number.isFinite(v)) return null;
  if (v === 0) return 0;
  return Number(v.toPrecision(digits));
}

export const MIB = 1024 * 1024;

/** A file-name-safe chart name from a stage name. */
export function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s || 'stage';
}

export function base(title: string, description: string): VlSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: { text: title, anchor: 'start' },
    description,
    config: { font: 'sans-serif', view: { stroke: null } },
  };
}
