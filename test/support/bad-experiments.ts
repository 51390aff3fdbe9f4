// The corpus of malformed experiment files (test/fixtures/experiments/bad/), one defect each: every
// file says in an `# expect: <field path> | <message>` line what the rejection must name.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { terminalLines } from '../../harness/cli/progress.js';
import { exitCodeFor } from '../../harness/errors.js';
import { CLI, FIXTURES } from './paths.js';
import { loadExperiment } from '../../harness/engine/load.js';

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

/** What the rejection of `file` lacks: null when exit code, stderr and stdout are as they should be. */
function judge(file: string, r: { exitCode?: number | undefined; stderr: string; stdout: string }): string | null {
  const [path, message] = expectation(file);
  if (r.exitCode !== 2) return `exit ${r.exitCode}, expected 2: ${r.stderr}`;
  if (path && !r.stderr.includes(path)) return `stderr does not name ${path}: ${r.stderr}`;
  if (message && !r.stderr.includes(message)) return `stderr does not say "${message}": ${r.stderr}`;
  if (r.stdout !== '') return `unexpected stdout: ${r.stdout}`;
  return null;
}

/** Runs `tunebench validate` on one bad file; null when it was rejected as it should be, else what went wrong. */
export async function checkRejected(file: string): Promise<string | null> {
  return judge(file, await execa(process.execPath, [CLI, 'validate', join(BAD, file)], { reject: false }));
}

/**
 * The same check without a process per file: `tunebench validate` is loadExperiment, and main reports
 * its error as `tunebench: invalid input: <message>` on stderr with exitCodeFor's status (harness/cli/main.ts);
 * a valid file would print a line on stdout. checkRejected runs the command itself on a sample.
 */
export function checkRejectedInProcess(file: string): string | null {
  try {
    const { source } = loadExperiment(join(BAD, file));
    return judge(file, { exitCode: 0, stderr: '', stdout: `${source}: valid` });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return judge(file, {
      exitCode: exitCodeFor(error),
      stderr: terminalLines(`tunebench: invalid input: ${message}\n`),
      stdout: '',
    });
  }
}
