// The files `history` keeps beside the runs of each experiment (baseline.json, accepted.json,
// confirmations.json): each read through its schema, a damaged one refused with file and field.
import { existsSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { ConfigError } from '../errors.js';
import { writeJsonAtomic } from '../store/atomic.js';
import { confirmationSchema, type Confirmation } from './series-gate.js';
import { CheckedFileError, readCheckedJson } from '../util/checked-json.js';
import { z } from 'zod';

export const BASELINE_FILE = 'baseline.json';
/** Runs accepted as a new level with `tunebench baseline accept`, per experiment folder. */
export const ACCEPTED_FILE = 'accepted.json';
/** The re-measurements of flagged metrics, per experiment folder. */
export const CONFIRMATIONS_FILE = 'confirmations.json';

const baselinePinSchema = z.object({ run_id: z.string(), set_at: z.string(), env_key: z.string() });
export type BaselinePin = z.infer<typeof baselinePinSchema>;

/** The pinned baseline of an experiment folder (<reports>/<experiment>/baseline.json), if any. */
export function readBaseline(experimentDir: string): BaselinePin | null {
  const path = join(experimentDir, BASELINE_FILE);
  if (!existsSync(path)) return null;
  try {
    return readCheckedJson(
      baselinePinSchema,
      path,
      'baseline.json',
      'pin the baseline again with tunebench baseline set <run-dir>',
    );
  } catch (error) {
    if (error instanceof CheckedFileError) throw new ConfigError(error.message, [], { cause: error });
    throw error;
  }
}

const acceptedRunSchema = z.object({ run_id: z.string(), at: z.string() });
export type AcceptedRun = z.infer<typeof acceptedRunSchema>;
const acceptedFileSchema = z.object({ accepted: z.array(acceptedRunSchema) });
const confirmationsFileSchema = z.object({ confirmations: z.array(confirmationSchema) });

/** A JSON file that history keeps beside the runs, checked; a missing file is an empty one. */
export function readHistoryFile<S extends z.ZodType>(
  schema: S,
  path: string,
  what: string,
  fix: string,
): z.output<S> | null {
  if (!existsSync(path)) return null;
  try {
    return readCheckedJson(schema, path, what, fix);
  } catch (error) {
    if (error instanceof CheckedFileError) throw new ConfigError(error.message, [], { cause: error });
    throw error;
  }
}

/** The runs accepted as new levels in an experiment folder. */
export function readAccepted(experimentDir: string): AcceptedRun[] {
  return (
    readHistoryFile(
      acceptedFileSchema,
      join(experimentDir, ACCEPTED_FILE),
      'the accepted-runs file',
      'accept the runs again with tunebench baseline accept <run-dir> after removing it',
    )?.accepted ?? []
  );
}

export function writeAccepted(experimentDir: string, accepted: AcceptedRun[]): string {
  const path = join(experimentDir, ACCEPTED_FILE);
  writeJsonAtomic(path, { accepted });
  return path;
}

/**
 * The folders a confirmation's run directory may lie in: the reports folder (which holds the default
 * history output) and the history's --out folder.
 */
export function confirmationRoots(experimentDir: string, outRoot?: string): string[] {
  return [dirname(resolve(experimentDir)), ...(outRoot ? [resolve(outRoot)] : [])];
}

/**
 * The confirmations recorded in an experiment folder, checked by their schema and each run_dir
 * checked to lie under one of `roots` (a confirmation names where it ran; anything else was forged).
 */
export function readConfirmations(experimentDir: string, roots = confirmationRoots(experimentDir)): Confirmation[] {
  const path = join(experimentDir, CONFIRMATIONS_FILE);
  const fix = 'remove it and run tunebench history again to re-confirm';
  const read = readHistoryFile(confirmationsFileSchema, path, 'the confirmations file', fix)?.confirmations ?? [];
  const outside = read.findIndex(
    (c) => c.run_dir !== null && !roots.some((root) => resolve(c.run_dir!).startsWith(`${root}${sep}`)),
  );
  if (outside >= 0)
    throw new ConfigError(
      `${path}: the confirmations file at field "confirmations[${outside}].run_dir": ` +
        `${JSON.stringify(read[outside]!.run_dir)} is not inside ${roots.join(' or ')}, where history runs ` +
        `confirmations (the file was edited, or written by a history with another --out): run history with that --out, or ${fix}`,
    );
  return read;
}

export function appendConfirmations(
  experimentDir: string,
  added: readonly Confirmation[],
  roots = confirmationRoots(experimentDir),
): string {
  const path = join(experimentDir, CONFIRMATIONS_FILE);
  writeJsonAtomic(path, { confirmations: [...readConfirmations(experimentDir, roots), ...added] });
  return path;
}

export function writeBaseline(runDir: string, pin: BaselinePin): string {
  const path = join(dirname(runDir), BASELINE_FILE);
  writeJsonAtomic(path, pin);
  return path;
}
