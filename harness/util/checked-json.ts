// Reads JSON that tunebench wrote earlier through a zod schema: a damaged or foreign file gets one
// message naming the file, the line and the field, instead of a crash deep in a report.
import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type { z } from 'zod';

/** Where a file failed its schema, and why; `line` is 1-based, null when no line applies. */
export interface FileProblem {
  file: string;
  line: number | null;
  field: string;
  message: string;
}

/** A file that is not JSON or does not have the shape tunebench writes. */
export class CheckedFileError extends Error {
  override readonly name = 'CheckedFileError';
  constructor(
    readonly problem: FileProblem,
    readonly what: string,
    options?: { cause?: unknown },
  ) {
    const at = problem.line === null ? problem.file : `${problem.file}:${problem.line}`;
    const field = problem.field ? ` at field "${problem.field}"` : '';
    super(`${at}: ${what}${field}: ${problem.message}`, options);
  }
}

/** `a.b[2].c` from a zod issue path. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The line of the deepest node on `path` that exists in `text` (JSON is YAML, which keeps source ranges). */
function lineOfField(text: string, path: readonly PropertyKey[]): number | null {
  try {
    const counter = new LineCounter();
    const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false });
    let node: unknown = doc.contents;
    let best: YamlNode | null = doc.contents ?? null;
    for (const key of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === key);
        if (!pair) break;
        best = (pair.key as YamlNode | null) ?? best;
        node = pair.value;
      } else if (isSeq(node) && typeof key === 'number') {
        node = node.items[key];
        if (!node) break;
        best = node as YamlNode;
      } else break;
    }
    const start = best?.range?.[0];
    return start === undefined ? null : counter.linePos(start).line;
  } catch {
    return null;
  }
}

/** The value at `path` inside `root`, as a short JSON text; undefined when the path is absent. */
function valueAt(root: unknown, path: readonly PropertyKey[]): string | undefined {
  let v: unknown = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  if (v === undefined) return undefined;
  const text = JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function describe(issue: z.core.$ZodIssue, root: unknown): string {
  const message = issue.message.replace(/^Invalid input: /, '');
  const got = valueAt(root, issue.path);
  return got === undefined || /received/.test(message) ? message : `${message} (got ${got})`;
}

/**
 * Parses `text`, the contents of `file`, as one JSON value and checks it against `schema`.
 * `what` names the file for people ("run.json of a run directory"); `fix` says what to do.
 */
export function parseCheckedJson<S extends z.ZodType>(
  schema: S,
  text: string,
  file: string,
  what: string,
  fix: string,
): z.output<S> {
  return check(schema, text, file, what, fix, null);
}

/** One line of a JSON Lines file (`lineNo` 1-based) checked against `schema`. */
export function parseCheckedLine<S extends z.ZodType>(
  schema: S,
  text: string,
  file: string,
  lineNo: number,
  what: string,
  fix: string,
): z.output<S> {
  return check(schema, text, file, what, fix, lineNo);
}

/** Reads `file` and checks it; a missing file throws the usual ENOENT error for the caller to word. */
export function readCheckedJson<S extends z.ZodType>(schema: S, file: string, what: string, fix: string): z.output<S> {
  return check(schema, readFileSync(file, 'utf8'), file, what, fix, null);
}

function check<S extends z.ZodType>(
  schema: S,
  text: string,
  file: string,
  what: string,
  fix: string,
  lineNo: number | null,
): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const pos = /position (\d+)/.exec(message);
    const line = lineNo ?? (pos ? lineOf(text, Number(pos[1])) : Number(/line (\d+)/.exec(message)?.[1]) || null);
    throw new CheckedFileError(
      { file, line, field: '', message: `not valid JSON (${message}); ${fix}` },
      `${what} is damaged`,
      { cause: error },
    );
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const issue = issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  throw new CheckedFileError(
    {
      file,
      line: lineNo ?? lineOfField(text, issue.path),
      field: fieldPath(issue.path),
      message: `${describe(issue, value)}${more}; ${fix}`,
    },
    `${what} does not have the shape tunebench writes`,
  );
}
