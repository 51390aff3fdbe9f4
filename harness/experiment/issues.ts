// Turns zod's issues into tunebench's messages: each names the field path, what was expected, what
// was found, and "did you mean" for a near miss; one issue per unknown key, as people fix them.
import type { z } from 'zod';
import { didYouMean } from './did-you-mean.js';

export interface Issue {
  path: string;
  message: string;
  /** 1-based line of the field in the experiment file, where the file has one. */
  line?: number;
}

type RawIssue = z.core.$ZodRawIssue;
type ErrorFn = (issue: RawIssue) => string | undefined;
type Schema = z.core.$ZodType;

/** Renders a found value for a message: strings quoted, objects by kind. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return String(value);
}

function got(issue: RawIssue): string {
  // zod reports a non-finite number as input null with `received`.
  const received = (issue as { received?: unknown }).received;
  return typeof received === 'string' && issue.input === null ? received : describeValue(issue.input);
}

/** The phrase ("a positive integer") behind each error function made by `expecting`. */
const PHRASES = new WeakMap<ErrorFn, string>();

/**
 * The error function of a schema whose every failure reads "expected <phrase>, got <value>" (or
 * "is required (<phrase>)"); zod also calls it for the schema's checks (min, int, regex).
 */
export function expecting(phrase: string): ErrorFn {
  const fn: ErrorFn = (issue) => {
    if (issue.code === 'custom') return undefined;
    return issue.input === undefined ? `is required (${phrase})` : `expected ${phrase}, got ${got(issue)}`;
  };
  PHRASES.set(fn, phrase);
  return fn;
}

/** What a schema accepts, as a noun phrase for messages. */
export function expectedOf(schema: Schema): string {
  const def = schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  const own = typeof def.error === 'function' ? PHRASES.get(def.error as ErrorFn) : undefined;
  if (own !== undefined) return own;
  const inner = (key: string) => expectedOf(def[key] as Schema);
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nonoptional':
      return inner('innerType');
    case 'pipe':
      return (def['in'] as Schema)._zod.def.type === 'transform' ? inner('out') : inner('in');
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'enum':
      return oneOf(Object.values(def['entries'] as Record<string, string>));
    case 'literal':
      return oneOf((def['values'] as unknown[]).map(String));
    case 'array':
      return `a list of ${inner('element')}`;
    case 'record':
      return `an object of ${inner('valueType')}`;
    case 'object':
      return 'an object';
    case 'union': {
      const options = def['options'] as Schema[];
      const tag = def['discriminator'] as string | undefined;
      if (tag === undefined) return options.map(expectedOf).join(' or ');
      const values = options.map((o) => [...(o._zod.propValues?.[tag] ?? [])].join(' | '));
      return `an object with ${tag} ${values.join(' | ')}`;
    }
    default:
      return String(def.type);
  }
}

function oneOf(values: readonly string[]): string {
  return `one of ${values.map((x) => JSON.stringify(x)).join(', ')}`;
}

/** Per object schema: the message for an unknown key, given the keys it allows. */
const UNKNOWN_KEY = new WeakMap<Schema, (key: string, allowed: readonly string[]) => string>();

export function onUnknownKey<S extends Schema>(
  schema: S,
  message: (key: string, allowed: readonly string[]) => string,
): S {
  UNKNOWN_KEY.set(schema, message);
  return schema;
}

export function unknownKeyMessage(key: string, allowed: readonly string[]): string {
  return `unknown key${didYouMean(key, allowed)}; allowed keys: ${allowed.join(', ')}`;
}

/** Messages for the issues of schemas without an error function of their own: structure, not values. */
const errorMap: ErrorFn = (issue) => {
  switch (issue.code) {
    case 'invalid_type': {
      const phrase = issue.inst ? expectedOf(issue.inst as Schema) : String(issue.expected);
      return issue.input === undefined ? `is required (${phrase})` : `expected ${phrase}, got ${got(issue)}`;
    }
    case 'unrecognized_keys': {
      // One message per key (JSON), split into one issue per key by locate.
      const object = issue.inst as Schema | undefined;
      const allowed = Object.keys((object?._zod.def as { shape?: object } | undefined)?.shape ?? {});
      const message = (object && UNKNOWN_KEY.get(object)) ?? unknownKeyMessage;
      return JSON.stringify(issue.keys.map((k) => message(k, allowed)));
    }
    case 'invalid_value': {
      const values = issue.values.map(String);
      if (issue.input === undefined) return `is required (${oneOf(values)})`;
      const hint = typeof issue.input === 'string' ? didYouMean(issue.input, values) : '';
      return `expected ${oneOf(values)}, got ${got(issue)}${hint}`;
    }
    case 'invalid_union': {
      if (issue.discriminator === undefined)
        return `expected ${issue.inst ? expectedOf(issue.inst as Schema) : 'another value'}, got ${got(issue)}`;
      const tag = issue.discriminator;
      const input = issue.input as Record<string, unknown>;
      const value = Object.hasOwn(input, tag) ? input[tag] : undefined;
      const options = ((issue.options ?? []) as readonly unknown[]).filter((o) => o !== undefined).map(String);
      const hint = typeof value === 'string' ? didYouMean(value, options) : '';
      return `expected ${oneOf(options)}, got ${describeValue(value)}${hint}`;
    }
    case 'too_small':
      if (issue.origin === 'array')
        return `expected at least ${issue.minimum} item(s), got ${(issue.input as unknown[]).length}`;
      return `expected at least ${issue.minimum}, got ${got(issue)}`;
    case 'too_big':
      if (issue.origin === 'array')
        return `expected at most ${issue.maximum} item(s), got ${(issue.input as unknown[]).length}`;
      return `expected at most ${issue.maximum}, got ${got(issue)}`;
    case 'invalid_key':
      return issue.issues.map((i) => i.message).join('; ');
    default:
      return undefined;
  }
};

interface Located {
  at: PropertyKey[];
  message: string;
}

function locate(issues: readonly z.core.$ZodIssue[], base: readonly PropertyKey[]): Located[] {
  const out: Located[] = [];
  for (const issue of issues) {
    const at = [...base, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      const messages = perKeyMessages(issue.message, issue.keys.length);
      for (const [i, k] of issue.keys.entries())
        out.push({ at: [...at, k], message: messages?.[i] ?? unknownKeyMessage(k, []) });
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      out.push(...chooseAlternative(issue, at));
    } else {
      out.push({ at, message: issue.message });
    }
  }
  return out;
}

function perKeyMessages(message: string, count: number): string[] | undefined {
  try {
    const parsed = JSON.parse(message) as unknown;
    return Array.isArray(parsed) && parsed.length === count ? parsed.map(String) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When no alternative of a union matched: the issues of the first alternative that got past the
 * value itself (every issue deeper than the union's path), else those of the one alternative that
 * took the value's type, else one "expected A or B" message. An alternative that failed only
 * because the input lacks its tag ("generate") got nowhere.
 */
function chooseAlternative(issue: z.core.$ZodIssueInvalidUnion, at: PropertyKey[]): Located[] {
  const tagless = (errors: readonly z.core.$ZodIssue[]) => {
    const only = errors.length === 1 ? errors[0]! : undefined;
    if (only?.code !== 'invalid_union' || only.discriminator === undefined) return false;
    const input = only.input;
    return typeof input === 'object' && input !== null && !Object.hasOwn(input, only.discriminator);
  };
  const alternatives = issue.errors.map((errors) => ({ tagless: tagless(errors), found: locate(errors, at) }));
  const deeper = alternatives.filter((a) => a.found.length > 0 && a.found.every((f) => f.at.length > at.length));
  const best = deeper.find((a) => !a.tagless) ?? deeper[0];
  if (best) return best.found;
  // One alternative took the value's type and refused only its bounds ([] for "at least 1 item"): say that.
  const typed = issue.errors.filter(
    (errors) =>
      errors.length > 0 &&
      errors.every((e) => e.path.length === 0 && e.code !== 'invalid_type' && e.code !== 'invalid_union'),
  );
  return typed.length === 1 ? locate(typed[0]!, at) : [{ at, message: issue.message }];
}

/** `stages[0].params.num_workers` from a zod path; keys that are not plain names are quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const name = String(key);
      const part = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? name : JSON.stringify(name);
      out += out ? `.${part}` : part;
    }
  }
  return out;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: (Issue & { at: PropertyKey[] })[] };

/**
 * Parses `raw` with tunebench's messages; every problem is reported, not just the first (inputs
 * kept for chooseAlternative).
 */
export function parseWith<S extends z.ZodType>(schema: S, raw: unknown): Parsed<z.output<S>> {
  const result = schema.safeParse(raw, { error: errorMap, reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    issues: locate(result.error.issues, []).map((l) => ({ at: l.at, path: formatPath(l.at), message: l.message })),
  };
}
