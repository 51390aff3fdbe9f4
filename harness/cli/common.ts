// Flags shared by every command, and turning them into typed options once.
import type { Command } from 'commander';
import { appendFileSync, statSync } from 'node:fs';
import type { ProgressMode } from './progress.js';
import { ConfigError } from '../errors.js';
import { shellWord } from '../util/shell.js';

/** Defaults of the common flags. */
export const DEFAULTS = {
  /** Where run directories go: <out>/<experiment>/<run-id>/ */
  out: 'reports',
  experiment: 'experiments/default.yaml',
} as const;

export interface CommonOptions {
  out: string;
  json: boolean;
  quiet: boolean;
}

export function addCommonOptions(cmd: Command): Command {
  return cmd
    .option('--out <dir>', 'directory for run directories', DEFAULTS.out)
    .option('--json', 'print a machine-readable result on stdout', false)
    .option('--quiet', 'no progress output', false);
}

export function resolveCommon(raw: Record<string, unknown>): Readonly<CommonOptions> {
  return Object.freeze({
    out: String(raw['out'] ?? DEFAULTS.out),
    json: raw['json'] === true,
    quiet: raw['quiet'] === true,
  });
}

/**
 * On GitHub Actions, appends Markdown to the job's step summary ($GITHUB_STEP_SUMMARY); elsewhere
 * does nothing. A summary that cannot be written is a warning, never a failed run.
 */
export function appendStepSummary(markdown: string, env: NodeJS.ProcessEnv = process.env): void {
  const path = env['GITHUB_STEP_SUMMARY'];
  if (!path) return;
  try {
    appendFileSync(path, `${markdown.trimEnd()}\n\n`);
  } catch (error) {
    process.stderr.write(
      `tunebench: warning: could not append to $GITHUB_STEP_SUMMARY (${path}): ${(error as Error).message}\n`,
    );
  }
}

/** --fail-on-regression: a percentage from 0 to 100, or undefined when not given. */
export function parseRegressionPct(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const pct = Number(value);
  if (!(pct >= 0 && pct < 100))
    throw new ConfigError(`--fail-on-regression: expected a percentage from 0 to 100, got ${JSON.stringify(value)}`);
  return pct;
}

/** --noise-band: a fraction from 0 to 0.5. */
export function parseNoiseBand(value: string): number {
  const band = Number(value);
  if (!(band >= 0 && band < 0.5))
    throw new ConfigError(`--noise-band: expected a fraction from 0 to 0.5, got ${JSON.stringify(value)}`);
  return band;
}

export function progressMode(o: CommonOptions, stream: NodeJS.WriteStream = process.stderr): ProgressMode {
  if (o.quiet) return 'quiet';
  return stream.isTTY ? 'tty' : 'plain';
}

/**
 * The "Examples:" block of a command's --help, for `cmd.addHelpText('after', examples(...))`: one
 * complete command line each, indented by two spaces (the help test looks for "  tunebench ").
 */
export function examples(...lines: string[]): string {
  return ['', 'Examples:', ...lines.map((line) => `  ${line}`)].join('\n');
}

/** A path as printed: one line, and one word when pasted into a shell (quoted where it needs to be). */
export function printablePath(path: string): string {
  return shellWord(path);
}

/** An output folder flag's value: a folder or nothing yet, never a file; returned as given. */
export function requireOutDir(flag: string, path: string): string {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    return path; // not there yet: it is created
  }
  if (!isDir)
    throw new ConfigError(
      `${flag} ${printablePath(path)} is a file, not a folder: pass a folder (it is created if missing)`,
    );
  return path;
}
