// Loads an experiment file (YAML or JSON), validates it against the schema and resolves relative paths.
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError } from '../errors.js';
import { checkExperiment } from './checks.js';
import type { ExperimentKinds } from './kinds.js';
import type { Issue } from './issues.js';
import { duplicateJsonKey } from './json-keys.js';
import { LineFinder } from './lines.js';
import { parseExperiment, type Experiment } from './schema.js';
import { formatBytes } from './units.js';

/**
 * Whether `path` can be loaded as an experiment file, as the commands that take either a file or a
 * command line decide (bisect, and the command history prints for it): null when it can, else why not.
 */
export function experimentFileProblem(path: string): 'missing' | 'not-a-file' | 'not-an-experiment-file' | null {
  if (!/\.(ya?ml|json)$/i.test(path)) return 'not-an-experiment-file';
  try {
    return statSync(path).isFile() ? null : 'not-a-file';
  } catch {
    return 'missing';
  }
}

/** Experiment files are a few kilobytes; a larger one is the wrong file or an attack, refused before parsing. */
export const MAX_EXPERIMENT_BYTES = 2 ** 20;
/** Aliases one YAML document may expand; an experiment needs a handful, a "billion laughs" needs millions. */
export const MAX_YAML_ALIASES = 100;

export interface LoadedExperiment {
  experiment: Experiment;
  /** Absolute path of the file, or '<inline>' */
  source: string;
  /** The file's text, kept in run.json so a run documents exactly what it ran. */
  text: string;
}

/** Reads and validates an experiment file, each stage checked by its kind's checks (`kinds`). */
export function loadExperimentWith(path: string, kinds: ExperimentKinds): LoadedExperiment {
  const source = resolve(path);
  let text: string;
  try {
    text = readBounded(source, path);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : String(error);
    throw new ConfigError(`cannot read experiment file ${path}: ${why}`, [], { cause: error });
  }
  return { experiment: parseExperimentTextWith(text, source, kinds), source, text };
}

/** What a file that is not a regular file is, in words (null for a regular file). */
function notRegular(stat: Stats): string | null {
  if (stat.isFile()) return null;
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

function refuseNotRegular(path: string, stat: Stats): void {
  const kind = notRegular(stat);
  if (kind === null) return;
  // Reading a FIFO or a device blocks the process (and with it every signal handler), or never ends.
  throw new ConfigError(
    `cannot read experiment file ${path}: it is ${kind}; an experiment file must be a regular file ` +
      '(YAML or JSON): give the path of the file itself',
  );
}

/**
 * The file's text. Anything but a regular file is refused before it is opened (a FIFO would block
 * the open, /dev/zero never ends); it is opened without blocking and checked again, so a file
 * swapped for a FIFO in between is refused too. A file above MAX_EXPERIMENT_BYTES is refused unread.
 */
function readBounded(source: string, path: string): string {
  refuseNotRegular(path, statSync(source));
  const fd = openSync(source, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    refuseNotRegular(path, stat);
    if (stat.size > MAX_EXPERIMENT_BYTES) throw tooLarge(source, stat.size);
    const buffer = Buffer.alloc(MAX_EXPERIMENT_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > MAX_EXPERIMENT_BYTES) throw tooLarge(source);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}

function tooLarge(source: string, bytes?: number): ConfigError {
  const size =
    bytes === undefined ? 'larger than the limit' : `${bytes} bytes (${formatBytes(bytes)}), larger than the limit`;
  return new ConfigError(
    `${source}: the experiment file is ${size} of ${formatBytes(MAX_EXPERIMENT_BYTES)} ` +
      `(${MAX_EXPERIMENT_BYTES} bytes); an experiment file is a few kilobytes, so check that this is the right file`,
  );
}

/**
 * Parses and validates experiment text, each stage checked by its kind's checks (`kinds`); relative model
 * paths resolve against the file's directory.
 */
export function parseExperimentTextWith(
  text: string,
  source: string,
  kinds: ExperimentKinds,
  format?: 'json' | 'yaml',
): Experiment {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_EXPERIMENT_BYTES) throw tooLarge(source, bytes);
  const raw = parseRaw(text, source, format);
  const parsed = parseExperiment(raw);
  if (!parsed.ok) throw invalid(source, text, parsed.issues);
  const experiment = parsed.value;
  // Cross-field rules run only on an experiment whose every field is valid.
  const problems = checkExperiment(experiment, kinds);
  if (problems.length > 0) throw invalid(source, text, problems);
  if (experiment.workload.kind === 'onnx') {
    const model = experiment.workload.model;
    if ('path' in model && !isAbsolute(model.path)) model.path = resolve(dirname(source), model.path);
  }
  return experiment;
}

/** One ConfigError for every problem, each with its field path and, where the file has it, its line. */
function invalid(
  source: string,
  text: string,
  issues: readonly (Issue & { at?: readonly PropertyKey[] })[],
): ConfigError {
  // A one-line text (such as the resolved experiment that resume re-reads) has no line worth naming.
  const lines = text.includes('\n') ? new LineFinder(text) : undefined;
  const located: Issue[] = issues.map(({ path, message, at }) => {
    const line = lines?.lineOf(at ?? pathKeys(path));
    return line === undefined ? { path, message } : { path, message, line };
  });
  // In the order of the file; problems without a line keep their order, after those with one.
  located.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || 0);
  const rendered = located.map(
    (i) => `  ${i.path || '(top level)'}: ${i.message}${i.line === undefined ? '' : ` (line ${i.line})`}`,
  );
  return new ConfigError(
    `${source}: invalid experiment (${located.length} problem${located.length === 1 ? '' : 's'}):\n` +
      `${rendered.join('\n')}`,
    located,
  );
}

/** The keys of a path written by the cross-field checks: `stages[1].params.x` -> ['stages', 1, 'params', 'x']. */
function pathKeys(path: string): PropertyKey[] {
  return [...path.matchAll(/\[(\d+)\]|"((?:[^"\\]|\\.)*)"|([^.[\]"]+)/g)].map((m) =>
    m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? (JSON.parse(`"${m[2]}"`) as string) : m[3]!,
  );
}

/** Levels of nesting an experiment may have: its deepest (a stage's params) needs a handful. */
export const MAX_NESTING = 64;

function parseRaw(text: string, source: string, format?: 'json' | 'yaml'): unknown {
  let value: unknown;
  try {
    value = parseUnchecked(text, source, format);
  } catch (error) {
    // A parser recursing through thousands of levels runs out of stack before it can say where.
    if (error instanceof RangeError) throw tooDeep(source, error);
    throw error;
  }
  if (deeperThan(value, MAX_NESTING)) throw tooDeep(source);
  return value;
}

function tooDeep(source: string, cause?: Error): ConfigError {
  return new ConfigError(
    `${source}: nested more than ${MAX_NESTING} levels deep (lists or maps inside each other); an experiment ` +
      'needs a few levels: this is not an experiment file, or it was generated wrong',
    [],
    cause ? { cause } : undefined,
  );
}

/** Whether a parsed value nests more than `limit` levels of lists and maps (walked without recursion). */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

function parseUnchecked(text: string, source: string, format?: 'json' | 'yaml'): unknown {
  if (format === 'json' || (format === undefined && extname(source).toLowerCase() === '.json')) {
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch (error) {
      throw new ConfigError(`${source}: not valid JSON: ${(error as Error).message}`, [], { cause: error });
    }
    const duplicate = duplicateJsonKey(text);
    if (duplicate)
      throw new ConfigError(
        `${source}: not valid JSON for tunebench: duplicate key ${JSON.stringify(duplicate.key)} ` +
          `at line ${duplicate.line}; a key may appear once in an object, so remove one of them`,
      );
    return value;
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    // The parser catches its own stack overflow on thousands of nested levels and reports it as a YAML error.
    if (/call stack size/i.test(first.message)) throw new RangeError(first.message);
    throw new ConfigError(`${source}: not valid YAML: ${first.message}`, [], { cause: first });
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    // The yaml library throws a ReferenceError for excessive aliases and for an alias to a missing anchor.
    const why = /alias count/i.test((error as Error).message)
      ? `its aliases (*name) expand to more than ${MAX_YAML_ALIASES} copies, as in a "billion laughs" attack; ` +
        'write the values out or use fewer aliases'
      : (error as Error).message;
    throw new ConfigError(`${source}: not valid YAML: ${why}`, [], { cause: error });
  }
  if (value === null || value === undefined)
    throw new ConfigError(`${source}: the file is empty; an experiment needs at least name, workload and stages`);
  return value;
}
