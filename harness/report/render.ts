// Compiles Vega-Lite specs and renders them to SVG in Node: a headless vega View with no renderer,
// no browser and no canvas (text is measured by vega's estimate). Nothing of vega's logging reaches
// the terminal: its warnings are collected, and a spec is made safe and pruned before it is drawn.
// vega and vega-lite load on the first chart: they are a third of the CLI's start-up, which every
// command and every SLURM task pays otherwise.
import type * as vega from 'vega';
import type { TopLevelSpec } from 'vega-lite';
import { pruneEmpty } from './charts/prune.js';
import { safeSpec, xmlSafe } from './charts/safe-spec.js';
import type { VlSpec } from './charts/spec.js';

export interface Compiled {
  vega: vega.Spec;
  warnings: string[];
}

/** A logger for vega and vega-lite that keeps warnings in `warnings` and throws on errors. */
function collectingLogger(warnings: string[], source: string) {
  const logger = {
    level(): never {
      return logger as never;
    },
    error(...args: unknown[]): never {
      throw new Error(`${source}: ${args.map(String).join(' ')}`);
    },
    warn(...args: unknown[]) {
      warnings.push(args.map(String).join(' '));
      return logger;
    },
    info() {
      return logger;
    },
    debug() {
      return logger;
    },
  };
  return logger;
}

let libraries: Promise<[typeof import('vega'), typeof import('vega-lite')]> | undefined;
const loadLibraries = () => (libraries ??= Promise.all([import('vega'), import('vega-lite')]));

/** Compiles a Vega-Lite spec, collecting every warning; errors throw. */
export async function compileSpec(spec: VlSpec): Promise<Compiled> {
  const [, vegaLite] = await loadLibraries();
  const warnings: string[] = [];
  const out = vegaLite.compile(spec as unknown as TopLevelSpec, {
    logger: collectingLogger(warnings, 'vega-lite'),
  });
  return { vega: out.spec, warnings };
}

export interface Drawn {
  /** The spec as drawn (safe text, finite numbers, empty parts left out); null when nothing was left. */
  spec: VlSpec | null;
  svg: string | null;
  /** Parts left out for lack of finite values, e.g. "rule of low, high". */
  omitted: string[];
  /** What vega and vega-lite warned while compiling and drawing. */
  warnings: string[];
}

/** Makes a chart's spec safe, leaves out its empty parts and draws what is left. */
export async function drawChart(spec: VlSpec): Promise<Drawn> {
  const { spec: drawable, omitted } = pruneEmpty(safeSpec(spec));
  if (!drawable) return { spec: null, svg: null, omitted, warnings: [] };
  const [vega] = await loadLibraries();
  const compiled = await compileSpec(drawable);
  const warnings = [...compiled.warnings];
  const logger = collectingLogger(warnings, 'vega');
  const view = new vega.View(vega.parse(compiled.vega), {
    renderer: 'none',
    logger: logger,
    logLevel: vega.Warn,
  });
  try {
    return { spec: drawable, svg: xmlSafe(await view.toSVG()), omitted, warnings };
  } finally {
    view.finalize();
  }
}

/** Renders a Vega-Lite spec to an SVG string; a chart with nothing to draw gives an SVG that says so. */
export async function renderSvg(spec: VlSpec): Promise<string> {
  const drawn = await drawChart(spec);
  return (
    drawn.svg ??
    '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="20"><text x="0" y="14">' +
      'not drawn: no finite values to plot</text></svg>'
  );
}
