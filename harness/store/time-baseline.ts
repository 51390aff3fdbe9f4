// Saved baselines of `tunebench time` (criterion's --save-baseline / --baseline, hyperfine #607): the
// per-run times of each command and the environment they ran in, in <out>/baselines/<name>.json,
// read back through a schema so that a damaged or foreign file is refused naming the file and field.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, StoreError } from '../errors.js';
import { fingerprintSchema } from '../domain/index.js';
import { CheckedFileError, parseCheckedJson } from '../util/checked-json.js';
import { describeWriteError, writeJsonAtomic } from './atomic.js';
import { makeDirs } from './run-dir.js';

/** Format version of a saved baseline file. */
export const TIME_BASELINE_VERSION = 1;
/** The folder under the reports folder (--out) that holds the saved baselines. */
export const TIME_BASELINES_DIR = 'baselines';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const positive = z.number().finite().positive();

export const timeBaselineSchema = z.object({
  tunebench_time_baseline: z.literal(TIME_BASELINE_VERSION),
  name: z.string().regex(NAME),
  saved_at: z.string(),
  /** The `tunebench time` command line that measured it, and its run directory. */
  command_line: z.string(),
  run_dir: z.string(),
  run_id: z.string(),
  environment: fingerprintSchema,
  commands: z
    .array(
      z.object({
        /** The command line as `tunebench time` labels it (or the scanned values, "workers=2"). */
        label: z.string(),
        timing: z.enum(['process', 'steps']),
        /** Seconds of every timed run that exited 0, in the order they ran: exec to exit. */
        times: z.array(positive),
      }),
    )
    .min(1),
});
export type TimeBaseline = z.infer<typeof timeBaselineSchema>;

/** The name as given, or a ConfigError that says what a name may hold. */
export function checkBaselineName(flag: string, name: string): string {
  if (!NAME.test(name))
    throw new ConfigError(
      `${flag} ${JSON.stringify(name)}: a baseline name is letters, digits, ".", "_" and "-" ` +
        '(starting with a letter or digit, at most 100), e.g. main or before-fix',
    );
  return name;
}

/** Where the baseline `name` is kept under the reports folder `out`. */
export function timeBaselinePath(out: string, name: string): string {
  return join(resolve(out), TIME_BASELINES_DIR, `${name}.json`);
}

/** The names of the baselines saved under `out`, sorted. */
export function savedBaselineNames(out: string): string[] {
  const dir = join(resolve(out), TIME_BASELINES_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json') && NAME.test(f.slice(0, -5)))
    .map((f) => f.slice(0, -5))
    .sort();
}

/** Writes (or replaces) a baseline atomically; returns its path. */
export function writeTimeBaseline(out: string, baseline: TimeBaseline): string {
  const path = timeBaselinePath(out, baseline.name);
  try {
    makeDirs(join(resolve(out), TIME_BASELINES_DIR));
    writeJsonAtomic(path, baseline);
  } catch (error) {
    throw new StoreError(
      `--save-baseline ${baseline.name}: could not write ${path} (${describeWriteError(error)}); ` +
        `the run itself is kept in ${baseline.run_dir}`,
      { cause: error },
    );
  }
  return path;
}

/** Reads the baseline `name` under `out` through its schema; a missing one names the saved ones. */
export function readTimeBaseline(out: string, name: string): TimeBaseline {
  const path = timeBaselinePath(out, name);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new StoreError(`--baseline ${name}: could not read ${path}: ${(error as Error).message}`, { cause: error });
    const saved = savedBaselineNames(out);
    throw new ConfigError(
      `--baseline ${name}: no saved baseline of that name (${path} does not exist); ` +
        (saved.length > 0
          ? `saved under ${join(resolve(out), TIME_BASELINES_DIR)}: ${saved.join(', ')}`
          : `none is saved under ${resolve(out)}`) +
        `; save one with tunebench time --save-baseline ${name} ... (with the same --out)`,
      [],
      { cause: error },
    );
  }
  try {
    const baseline = parseCheckedJson(
      timeBaselineSchema,
      text,
      path,
      'a saved time baseline',
      `save it again with tunebench time --save-baseline ${name} ...`,
    );
    if (baseline.name !== name)
      throw new ConfigError(
        `${path}: the file holds the baseline ${JSON.stringify(baseline.name)}, not ${JSON.stringify(name)} ` +
          `(renamed by hand?); save it again with tunebench time --save-baseline ${name} ...`,
      );
    return baseline;
  } catch (error) {
    if (error instanceof CheckedFileError) throw new ConfigError(error.message, [], { cause: error });
    throw error;
  }
}
