// The corpus of malformed experiment files (test/fixtures/experiments/bad/), one defect each: every
// file says in an `# expect: <field path> | <message>` line what the rejection must name.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, FIXTURES } from './paths.js';

export const BAD = join(FIXTURES, 'experiments', 'bad');
/** Files that cannot carry an `# expect:` comment. */
const EXPECT_OTHER: Record<string, [string, string]> = { '14-json-syntax.json': ['', 'not valid JSON'] };

export function badFiles(): string[] {
  return readdirSync(BAD).sort();
}

/** The field path and message the rejection of this file must contain. */
export function expectation(file: string): [string, string] {
  const other = EXPECT_OTHER[file];
  if (other) return other;
  const m = /^# expect: (.*?) \| ?(.*)$/m.exec(readFileSync(join(BAD, file), 'utf8'));
  assert.ok(m, `${file} has an # expect: line`);
  return [m[1]!.trim(), m[2]!.trim()];
}

/** Runs `tunebench validate` on one bad file; null when it was rejected as it should be, else what went wrong. */
export async function checkRejected(file: string): Promise<string | null> {
  const r = await execa(process.execPath, [CLI, 'validate', join(BAD, file)], { reject: false });
  const [path, message] = expectation(file);
  if (r.exitCode !== 2) return `exit ${r.exitCode}, expected 2: ${r.stderr}`;
  if (path && !r.stderr.includes(path)) return `stderr does not name ${path}: ${r.stderr}`;
  if (message && !r.stderr.includes(message)) return `stderr does not say "${message}": ${r.stderr}`;
  if (r.stdout !== '') return `unexpected stdout: ${r.stdout}`;
  return null;
}
