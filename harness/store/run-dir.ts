// The run directory: reports/<experiment>/<run-id>/ with run.json, the journal and the reports.
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { ConfigError, StoreError } from '../errors.js';
import { describeWriteError, writeFileAtomic, writeJsonAtomic } from './atomic.js';
import { JOURNAL_FILE, Journal } from './journal.js';
import { acquireLock, type RunLock } from './lock.js';
import type { z } from 'zod';
import { READABLE_RUN_VERSIONS, RUN_VERSION, versionList } from '../domain/index.js';
import { CheckedFileError, parseCheckedJson } from '../util/checked-json.js';

export const RUN_FILE = 'run.json';

export interface RunDir {
  path: string;
  runId: string;
  journal: Journal;
  scratch: string;
  /** Held from creation (or resume) until the run ends; released by whoever ends it. */
  lock: RunLock;
}

/** A sortable, unique run id: UTC time plus a short random suffix. */
export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

/** The directory name of an experiment: its name with anything but letters, digits, ".", "_" and "-" as "_". */
export function experimentDirName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return safe || 'experiment';
}

export function createRunDir(outDir: string, experimentName: string, runId = newRunId()): RunDir {
  const path = resolve(outDir, experimentDirName(experimentName), runId);
  try {
    makeDirs(join(path, 'charts'));
    makeDirs(join(path, '.scratch'));
  } catch (error) {
    throw new StoreError(`could not create the run directory ${path}: ${describeWriteError(error)}`, { cause: error });
  }
  return openRunDir(path, runId);
}

/** An existing run directory, locked for this process (resume). */
export function openRunDir(path: string, runId: string): RunDir {
  const lock = acquireLock(path);
  const scratch = join(path, '.scratch');
  const kind = lstatOrUndefined(scratch);
  // The trials' files (events, environments) are made in it as root: never through a link someone planted.
  if (kind !== undefined && (kind.isSymbolicLink() || !kind.isDirectory())) {
    lock.release();
    const what = kind.isSymbolicLink() ? `a symbolic link (to ${readlinkSync(scratch)})` : 'not a folder';
    throw new StoreError(
      `${scratch} is ${what}: the trials' files are written there, so it must be a folder of the run's own; ` +
        `remove it (rm ${scratch}) and resume: tunebench makes it again`,
    );
  }
  makeDirs(scratch);
  return { path, runId, journal: new Journal(join(path, JOURNAL_FILE)), scratch: join(path, '.scratch'), lock };
}

/**
 * mkdir -p one component at a time: Node's recursive mkdirSync spins forever on some paths
 * (for example under /proc), where this fails at once with the real error.
 */
export function makeDirs(path: string): void {
  const parts = resolve(path).split(sep).filter(Boolean);
  let current: string = sep;
  for (const part of parts) {
    current = join(current, part);
    if (existsSync(current)) continue;
    mkdirSync(current);
  }
}

/**
 * makeDirs for a folder tunebench owns inside a run or report directory (charts/): it must be a real
 * folder, never a symbolic link, or a planted link would make tunebench delete and write elsewhere.
 */
export function makeOwnDir(path: string): void {
  try {
    makeDirs(path);
  } catch (error) {
    throw new StoreError(`could not create ${path}: ${describeWriteError(error)}`, { cause: error });
  }
  const st = lstatSync(path);
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new StoreError(
      `refusing to write into ${path}: ` +
        `it is ${st.isSymbolicLink() ? `a symbolic link (to ${readlinkSync(path)})` : 'not a folder'}, ` +
        'and tunebench writes only into folders it made; remove it and run the command again',
    );
  }
}

/**
 * Reads <dir>/run.json through `schema` (run.json's, which knows the stage kinds: experiment/run-file.ts).
 * A file that is not JSON, or not shaped as tunebench writes it, was damaged after tunebench wrote it
 * (it writes it atomically) or is foreign: the error names the file, the line and the field, then what
 * that means for the caller (`consequence`).
 */
export function readRunJsonThrough<S extends z.ZodType>(schema: S, dir: string, consequence: string): z.output<S> {
  const path = join(dir, RUN_FILE);
  try {
    const text = readFileSync(path, 'utf8');
    const version = runFormatOf(text);
    if (typeof version !== 'number' || !READABLE_RUN_VERSIONS.includes(version))
      throw new RunFormatError(path, version, consequence);
    return parseCheckedJson(
      schema,
      text,
      path,
      'run.json',
      'the run directory was damaged after tunebench wrote it, ' +
        `or it is not a tunebench run (tunebench writes ${RUN_FILE} atomically); ${consequence}`,
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ConfigError(
        `${dir} is not a run directory: ` +
          `${RUN_FILE} is missing (expected reports/<experiment>/<run-id>/, as tunebench printed it)`,
        [],
        { cause: error },
      );
    }
    if (error instanceof RunFormatError) throw error;
    if (error instanceof CheckedFileError) throw new ConfigError(error.message, [], { cause: error });
    throw new StoreError(`could not read ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** run.json of another format version (written by another tunebench): refused before its shape is checked. */
export class RunFormatError extends ConfigError {
  constructor(
    readonly path: string,
    readonly version: unknown,
    consequence: string,
  ) {
    super(
      `${path} has run format ${JSON.stringify(version ?? null)}, and this tunebench reads formats ` +
        `${versionList(READABLE_RUN_VERSIONS)}; ` +
        `use the tunebench version that wrote it; ${consequence}`,
    );
  }
}

/** The `tunebench_run` of a run.json text; RUN_VERSION when the text is not JSON (the schema check then says so). */
function runFormatOf(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as { tunebench_run?: unknown }).tunebench_run
      : RUN_VERSION;
  } catch {
    return RUN_VERSION;
  }
}

/** Writes <dir>/run.json, atomically; `value` is run.json as experiment/run-file.ts types it. */
export function writeRunJsonFile(dir: RunDir, value: object): void {
  writeJsonAtomic(join(dir.path, RUN_FILE), value);
}

/** The files of a run that its report links to, besides the reports themselves. */
const LINKED_FILES = [RUN_FILE, JOURNAL_FILE, 'chosen-config.json', 'chosen-config.env', 'chosen-config.yaml'];

/**
 * Copies the files a run's report links to (run.json, the journal, the chosen config) into another
 * folder, so that a report rebuilt there (`tunebench report --out`) is whole; returns the folder.
 */
export function copyRunFiles(from: string, to: string): string {
  makeOwnDir(to);
  for (const name of LINKED_FILES) {
    if (!existsSync(join(from, name))) continue;
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(from, name));
    } catch (error) {
      throw new StoreError(`could not read ${name} in ${from}: ${describeWriteError(error)}`, { cause: error });
    }
    // Written beside the target and renamed over it: a link planted in the folder is replaced, never written through.
    writeFileAtomic(join(to, name), bytes);
  }
  return to;
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
