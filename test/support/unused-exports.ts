// The unused-export check of `npm run lint` (scripts/unused-exports.mjs), typed for the tests.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './paths.js';

interface UnusedExportsScript {
  unusedExports(files: readonly string[], declaredIn: (file: string) => boolean): string[];
  unusedHarnessExports(): string[];
}

/** The script's functions, loaded from the checkout (the compiled tests run from dist/). */
export function unusedExportsScript(): Promise<UnusedExportsScript> {
  return import(pathToFileURL(join(ROOT, 'scripts', 'unused-exports.mjs')).href) as Promise<UnusedExportsScript>;
}
