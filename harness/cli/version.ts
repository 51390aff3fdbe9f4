// The version line: the package version and the commit it was built from ("0.1.0 (commit 1a2b3c4)").
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const require = createRequire(import.meta.url);
/** The package root: dist/harness/cli/ is three folders below it. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const buildInfoSchema = z.object({ commit: z.string().nullable() });

/** The commit of a git checkout at the package root, else the one the build recorded (dist/build-info.json). */
function commit(): string | null {
  // Only the package's own checkout counts: a package installed inside another repository must not
  // report that repository's commit.
  if (existsSync(join(ROOT, '.git'))) {
    try {
      const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
      if (head.toString().trim()) return head.toString().trim();
    } catch {
      // No git on PATH: fall back to what the build recorded.
    }
  }
  try {
    const info = buildInfoSchema.safeParse(JSON.parse(readFileSync(join(ROOT, 'dist', 'build-info.json'), 'utf8')));
    return info.success ? info.data.commit : null;
  } catch {
    return null;
  }
}

export function versionLine(): string {
  const { version } = require(join(ROOT, 'package.json')) as { version: string };
  const c = commit();
  return `${version} (commit ${c ? c.slice(0, 12) : 'unknown'})`;
}
