// A small schema language: one definition validates input with precise messages and exports JSON Schema.

export interface Issue {
  path: string;
  message: string;
}

export type JsonSchema = Record<string, unknown>;

export interface Schema<T> {
  /** Returns the parsed value, or pushes issues and returns undefined. */
  parse(value: unknown, path: string, issues: Issue[]): T | undefined;
  jsonSchema(): JsonSchema;
  /** Short noun phrase used in messages: "a positive integer". */
  readonly expected: string;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

/** Renders a found value for a message: strings quoted, objects by kind. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return String(value);
}

function fail(issues: Issue[], path: string, expected: string, value: unknown): undefined {
  issues.push({ path, message: `expected ${expected}, got ${describe(value)}` });
  return undefined;
}

function make<T>(expected: string, json: JsonSchema, check: (v: unknown, path: string, issues: Issue[]) => T | undefined): Schema<T> {
  return { expected, parse: check, jsonSchema: () => json };
}

export const s = {
  /** `check` returns a message for a string that has the right form but is refused all the same. */
  string(opts: { pattern?: RegExp; hint?: string; description?: string; check?: (v: string) => string | undefined } = {}): Schema<string> {
    const expected = opts.hint ?? 'a string';
    const json: JsonSchema = { type: 'string', ...(opts.pattern ? { pattern: opts.pattern.source } : {}), ...desc(opts.description) };
    return make(expected, json, (v, path, issues) => {
      if (typeof v !== 'string' || (opts.pattern && !opts.pattern.test(v))) return fail(issues, path, expected, v);
      const refused = opts.check?.(v);
      if (refused === undefined) return v;
      issues.push({ path, message: refused });
      return undefined;
    });
  },

  number(opts: { min?: number; max?: number; exclusiveMin?: number; integer?: boolean; description?: string } = {}): Schema<number> {
    const expected = numberPhrase(opts);
    const json: JsonSchema = {
      type: opts.integer ? 'integer' : 'number',
      ...(opts.min !== undefined ? { minimum: opts.min } : {}),
      ...(opts.max !== undefined ? { maximum: opts.max } : {}),
      ...(opts.exclusiveMin !== undefined ? { exclusiveMinimum: opts.exclusiveMin } : {}),
      ...desc(opts.description),
    };
    return make(expected, json, (v, path, issues) => {
      const ok =
        typeof v === 'number' &&
        Number.isFinite(v) &&
        (!opts.integer || Number.isInteger(v)) &&
        (opts.min === undefined || v >= opts.min) &&
        (opts.max === undefined || v <= opts.max) &&
        (opts.exclusiveMin === undefined || v > opts.exclusiveMin);
      return ok ? (v as number) : fail(issues, path, expected, v);
    });
  },

  boolean(description?: string): Schema<boolean> {
    return make('true or false', { type: 'boolean', ...desc(description) }, (v, path, issues) =>
      typeof v === 'boolean' ? v : fail(issues, path, 'true or false', v),
    );
  },

  literal<const T extends string>(values: readonly T[], description?: string): Schema<T> {
    const expected = `one of ${values.map((x) => JSON.stringify(x)).join(', ')}`;
    return make(expected, { enum: [...values], ...desc(description) }, (v, path, issues) =>
      typeof v === 'string' && (values as readonly string[]).includes(v) ? (v as T) : failEnum(issues, path, values, v),
    );
  },

  /**
   * A value given either as a number or as a string with units, converted by `convert`; `bound.max`
   * bounds the converted value, `bound.format` writes a converted value in messages ("604800 s").
   */
  unit(
    expected: string,
    pattern: RegExp,
    convert: (v: string | number) => number | undefined,
    description?: string,
    bound?: { max: number; format: (n: number) => string; why: string },
  ): Schema<number> {
    // The bound is not exported: a string such as "200h" could not carry it anyway.
    const json: JsonSchema = { oneOf: [{ type: 'number', minimum: 0 }, { type: 'string', pattern: pattern.source }], ...desc(description) };
    return make(expected, json, (v, path, issues) => {
      const out = typeof v === 'number' || (typeof v === 'string' && pattern.test(v)) ? convert(v) : undefined;
      if (out === undefined) return fail(issues, path, expected, v);
      if (bound && out > bound.max) {
        issues.push({ path, message: `expected at most ${bound.format(bound.max)}, got ${describe(v)}${typeof v === 'string' ? `, which is ${bound.format(out)}` : ''}; ${bound.why}` });
        return undefined;
      }
      return out;
    });
  },

  array<T>(item: Schema<T>, opts: { minItems?: number; description?: string } = {}): Schema<T[]> {
    const expected = `a list of ${item.expected}`;
    const json: JsonSchema = { type: 'array', items: item.jsonSchema(), ...(opts.minItems ? { minItems: opts.minItems } : {}), ...desc(opts.description) };
    return make(expected, json, (v, path, issues) => {
      if (!Array.isArray(v)) return fail(issues, path, expected, v);
      if (opts.minItems && v.length < opts.minItems) {
        issues.push({ path, message: `expected at least ${opts.minItems} item(s), got ${v.length}` });
        return undefined;
      }
      const before = issues.length;
      const out = v.map((x, i) => item.parse(x, `${path}[${i}]`, issues));
      return issues.length === before ? (out as T[]) : undefined;
    });
  },

  /**
   * An object with names chosen by the user. A name of Object.prototype is always refused (it would
   * be dropped or shadowed); `checkKey` returns a message for any other name it refuses.
   */
  record<T>(value: Schema<T>, description?: string, opts: { noun?: string; checkKey?: (key: string) => string | undefined } = {}): Schema<Record<string, T>> {
    const expected = `an object of ${value.expected}`;
    const json: JsonSchema = { type: 'object', additionalProperties: value.jsonSchema(), ...desc(description) };
    return make(expected, json, (v, path, issues) => {
      if (!isPlainObject(v)) return fail(issues, path, 'an object', v);
      const before = issues.length;
      const out: Record<string, T> = {};
      for (const [k, x] of Object.entries(v)) {
        const refused = isObjectPrototypeKey(k) ? reservedKeyMessage(k, opts.noun) : opts.checkKey?.(k);
        if (refused !== undefined) {
          issues.push({ path: join(path, k), message: refused });
          continue;
        }
        const parsed = value.parse(x, join(path, k), issues);
        if (parsed !== undefined) out[k] = parsed;
      }
      return issues.length === before ? out : undefined;
    });
  },

  object<P extends Record<string, Field<unknown>>>(props: P, description?: string): Schema<ObjectOf<P>> {
    const keys = Object.keys(props);
    const json: JsonSchema = {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(keys.map((k) => [k, props[k]!.schema.jsonSchema()])),
      required: keys.filter((k) => !props[k]!.optional),
      ...desc(description),
    };
    return make('an object', json, (v, path, issues) => {
      if (!isPlainObject(v)) return fail(issues, path, 'an object', v);
      const before = issues.length;
      for (const key of Object.keys(v)) {
        // Own keys only: "constructor" or "__proto__" is unknown here, not a property every object has.
        if (!Object.hasOwn(props, key)) issues.push({ path: join(path, key), message: unknownKeyMessage(key, keys) });
      }
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        const field = props[key]!;
        if (v[key] === undefined) {
          if (!field.optional) issues.push({ path: join(path, key), message: `is required (${field.schema.expected})` });
          else if (field.fallback !== undefined) out[key] = field.fallback;
          continue;
        }
        const parsed = field.schema.parse(v[key], join(path, key), issues);
        if (parsed !== undefined) out[key] = parsed;
      }
      return issues.length === before ? (out as ObjectOf<P>) : undefined;
    });
  },

  /** A union of objects told apart by a string field such as `kind`. */
  tagged<V extends Record<string, Schema<unknown>>>(tag: string, variants: V): Schema<{ [K in keyof V]: Infer<V[K]> }[keyof V]> {
    type T = { [K in keyof V]: Infer<V[K]> }[keyof V];
    const names = Object.keys(variants);
    const json: JsonSchema = { oneOf: names.map((n) => variants[n]!.jsonSchema()) };
    return make(`an object with ${tag} ${names.join(' | ')}`, json, (v, path, issues) => {
      if (!isPlainObject(v)) return fail(issues, path, 'an object', v);
      const name = v[tag];
      // Own keys only: a kind of "constructor" must not find Object.prototype.constructor.
      const variant = typeof name === 'string' && Object.hasOwn(variants, name) ? variants[name] : undefined;
      if (!variant) return failEnum(issues, join(path, tag), names, v[tag]);
      return variant.parse(v, path, issues) as T | undefined;
    });
  },

  /** Tries schemas in order; the message lists what each alternative expects. */
  either<A, B>(a: Schema<A>, b: Schema<B>): Schema<A | B> {
    const expected = `${a.expected} or ${b.expected}`;
    return make(expected, { oneOf: [a.jsonSchema(), b.jsonSchema()] }, (v, path, issues) => {
      const trial: Issue[] = [];
      const first = a.parse(v, path, trial);
      if (first !== undefined) return first;
      const trial2: Issue[] = [];
      const second = b.parse(v, path, trial2);
      if (second !== undefined) return second;
      // Report the alternative that got further (fewer issues at the top level).
      const deeper = [trial, trial2].find((t) => t.length > 0 && t.every((i) => i.path !== path));
      if (deeper) issues.push(...deeper);
      else issues.push({ path, message: `expected ${expected}, got ${describe(v)}` });
      return undefined;
    });
  },
};

/** A property of an object schema; `present` says whether the parsed value always has it. */
export interface Field<T, Present extends boolean = boolean> {
  schema: Schema<T>;
  optional: boolean;
  fallback?: T;
  present?: Present;
}

export function required<T>(schema: Schema<T>): Field<T, true> {
  return { schema, optional: false };
}

export function optional<T>(schema: Schema<T>): Field<T, false>;
export function optional<T>(schema: Schema<T>, fallback: T): Field<T, true>;
export function optional<T>(schema: Schema<T>, fallback?: T): Field<T, boolean> {
  return fallback === undefined ? { schema, optional: true } : { schema, optional: true, fallback };
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type ObjectOf<P extends Record<string, Field<unknown>>> = Simplify<
  {
    [K in keyof P as P[K] extends Field<unknown, true> ? K : never]: P[K] extends Field<infer T> ? T : never;
  } & {
    [K in keyof P as P[K] extends Field<unknown, true> ? never : K]?: P[K] extends Field<infer T> ? T : never;
  }
>;

function desc(description: string | undefined): JsonSchema {
  return description ? { description } : {};
}

function numberPhrase(o: { min?: number; max?: number; exclusiveMin?: number; integer?: boolean }): string {
  const noun = o.integer ? 'integer' : 'number';
  if (o.exclusiveMin === 0 || (o.integer && o.min === 1)) {
    return o.max === undefined ? `a positive ${noun}` : `a positive ${noun} up to ${o.max}`;
  }
  if (o.min === 0 && o.max === undefined) return `a non-negative ${noun}`;
  if (o.min !== undefined && o.max !== undefined) return `a${o.integer ? 'n' : ''} ${noun} from ${o.min} to ${o.max}`;
  if (o.min !== undefined) return `a${o.integer ? 'n' : ''} ${noun} of at least ${o.min}`;
  return o.integer ? 'an integer' : 'a number';
}

function failEnum(issues: Issue[], path: string, values: readonly string[], v: unknown): undefined {
  const hint = typeof v === 'string' ? closest(v, values) : undefined;
  const list = values.map((x) => JSON.stringify(x)).join(', ');
  issues.push({ path, message: `expected one of ${list}, got ${describe(v)}${hint ? ` (did you mean "${hint}"?)` : ''}` });
  return undefined;
}

function unknownKeyMessage(key: string, known: readonly string[]): string {
  const hint = closest(key, known);
  return `unknown key${hint ? ` (did you mean "${hint}"?)` : ''}; allowed keys: ${known.join(', ')}`;
}

function join(path: string, key: string): string {
  const part = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key);
  return path ? `${path}.${part}` : part;
}

/** Names that every JavaScript object already has ("constructor", "toString", "__proto__", ...). */
const OBJECT_PROTOTYPE_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

export function isObjectPrototypeKey(key: string): boolean {
  return OBJECT_PROTOTYPE_KEYS.has(key);
}

/** Why a user-chosen name such as "constructor" is refused; `noun` names what it names ("parameter"). */
export function reservedKeyMessage(key: string, noun = 'key'): string {
  const why =
    key === '__proto__'
      ? 'it is reserved in JavaScript, where it sets an object\'s prototype instead of adding a key, so it would be silently dropped'
      : `names of JavaScript object properties (Object.prototype.${key}) are reserved, since every object already has them`;
  return `${JSON.stringify(key)} cannot be a ${noun} name: ${why}; rename the ${noun}`;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The known word within edit distance max(2, len/3) of `word`, if any. */
export function closest(word: string, known: readonly string[]): string | undefined {
  // A truncated name ("multiple" for "multiple_of") is a likelier slip than any edit.
  const lower = word.toLowerCase();
  const prefixed = lower.length >= 3 ? known.find((k) => k.toLowerCase().startsWith(lower)) : undefined;
  if (prefixed) return prefixed;
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of known) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
