// Paths of the source tree as seen from compiled tests in dist/test/.
import { fileURLToPath } from 'node:url';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const PROGRAMS = join(FIXTURES, 'programs');
export const CLI = join(ROOT, 'dist', 'harness', 'cli', 'main.js');

export function tempDir(prefix = 'tunebench-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
