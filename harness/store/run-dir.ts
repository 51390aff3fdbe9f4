// The run directory: reports/<experiment>/<run-id>/ with run.json, the journal and the reports.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreError } from '../errors.js';
import { writeJsonAtomic } from './atomic.js';
import { JOURNAL_FILE, Journal } from './journal.js';

export const RUN_FILE = 'run.json';

export interface RunDir {
  path: string;
  runId: string;
  journal: Journal;
  scratch: string;
}

/** A sortable, unique run id: UTC time plus a short random suffix. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

export function createRunDir(outDir: string, experimentName: string, runId = newRunId()): RunDir {
  const path = resolve(outDir, experimentName, runId);
  try {
    mkdirSync(join(path, 'charts'), { recursive: true });
    mkdirSync(join(path, '.scratch'), { recursive: true });
  } catch (error) {
    throw new StoreError(`could not create the run directory ${path}: ${(error as Error).message}; pass --out <dir> to write elsewhere`, { cause: error });
  }
  return { path, runId, journal: new Journal(join(path, JOURNAL_FILE)), scratch: join(path, '.scratch') };
}

export function writeRunJson(dir: RunDir, value: unknown): void {
  writeJsonAtomic(join(dir.path, RUN_FILE), value);
}

export function readRunJson<T>(path: string): T {
  try {
    return JSON.parse(readFileSync(join(path, RUN_FILE), 'utf8')) as T;
  } catch (error) {
    throw new StoreError(`${path} is not a tunebench run directory (no readable ${RUN_FILE})`, { cause: error });
  }
}
