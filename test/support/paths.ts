// Paths of the source tree as seen from compiled tests in dist/test/.
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const PROGRAMS = join(FIXTURES, 'programs');
export const CLI = join(ROOT, 'dist', 'harness', 'cli', 'main.js');

const made = new Set<string>();

/** A fresh folder under the system's temporary folder, removed when the test process exits. */
export function tempDir(prefix = 'tunebench-test-'): string {
  if (made.size === 0) process.once('exit', removeTempDirs);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

function removeTempDirs(): void {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch {
      // A folder still mounted (a tmpfs of the storage tests) or busy: left for the system to clean.
    }
  }
  made.clear();
}
