// Compiles Vega-Lite specs and renders them to SVG in Node: a headless vega View with no renderer,
// no browser and no canvas (text is measured by vega's estimate).
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { VlSpec } from './charts/spec.js';

export interface Compiled {
  vega: vega.Spec;
  warnings: string[];
}

/** Compiles a Vega-Lite spec, collecting every warning; errors throw. */
export function compileSpec(spec: VlSpec): Compiled {
  const warnings: string[] = [];
  const logger = {
    level(): never {
      return logger as never;
    },
    error(...args: unknown[]): never {
      throw new Error(`vega-lite: ${args.map(String).join(' ')}`);
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
  const out = compile(spec as unknown as TopLevelSpec, { logger: logger as never });
  return { vega: out.spec, warnings };
}

/** Renders a Vega-Lite spec to an SVG string. */
export async function renderSvg(spec: VlSpec): Promise<string> {
  const view = new vega.View(vega.parse(compileSpec(spec).vega), { renderer: 'none', logLevel: vega.Warn });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
