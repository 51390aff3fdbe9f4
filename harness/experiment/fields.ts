// Field builders for the experiment schema: zod types that carry the phrase their messages use
// ("expected a positive integer, got 0") and refuse names JavaScript objects already have.
import { z } from 'zod';
import { describeValue, expecting } from './issues.js';
import { isObjectPrototypeKey, paramNameProblem, reservedKeyMessage } from './names.js';
import { DURATION_PATTERN, formatBytes, parseDuration, parseSize, SIZE_PATTERN } from './units.js';

interface NumberOpts {
  min?: number;
  max?: number;
  exclusiveMin?: number;
  integer?: boolean;
}

function numberPhrase(o: NumberOpts): string {
  const noun = o.integer ? 'integer' : 'number';
  if (o.exclusiveMin === 0 || (o.integer && o.min === 1)) {
    return o.max === undefined ? `a positive ${noun}` : `a positive ${noun} up to ${o.max}`;
  }
  if (o.min === 0 && o.max === undefined) return `a non-negative ${noun}`;
  if (o.min !== undefined && o.max !== undefined) return `a${o.integer ? 'n' : ''} ${noun} from ${o.min} to ${o.max}`;
  if (o.min !== undefined) return `a${o.integer ? 'n' : ''} ${noun} of at least ${o.min}`;
  return o.integer ? 'an integer' : 'a number';
}

const described = <S extends z.ZodType>(schema: S, description?: string): S =>
  description ? schema.describe(description) : schema;

/** A finite number; each bound aborts, so a value gets one message however many bounds it breaks. */
export function num(opts: NumberOpts = {}, description?: string) {
  let schema = z.number({ error: expecting(numberPhrase(opts)) });
  // zod's int() also refuses integers above 2^53 - 1, under the phrase "an integer": say the limit instead.
  if (opts.integer && (opts.max === undefined || opts.max > Number.MAX_SAFE_INTEGER))
    schema = schema.max(Number.MAX_SAFE_INTEGER, {
      abort: true,
      error: (issue) =>
        `expected at most ${Number.MAX_SAFE_INTEGER} (2^53 - 1, the largest integer a number holds exactly), ` +
        `got ${describeValue(issue.input)}`,
    });
  if (opts.integer) schema = schema.int({ abort: true });
  if (opts.min !== undefined) schema = schema.min(opts.min, { abort: true });
  if (opts.max !== undefined) schema = schema.max(opts.max, { abort: true });
  if (opts.exclusiveMin !== undefined) schema = schema.gt(opts.exclusiveMin, { abort: true });
  return described(schema, description);
}

export const positiveInt = (description?: string) => num({ integer: true, min: 1 }, description);
export const nonNegativeInt = (description?: string) => num({ integer: true, min: 0 }, description);
export const fraction = (description: string) => num({ min: 0, max: 0.95 }, description);

/** `check` returns a message for a string that has the right form but is refused all the same. */
export function str(
  opts: { pattern?: RegExp; hint?: string; description?: string; check?: (v: string) => string | undefined } = {},
) {
  let schema = z.string({ error: expecting(opts.hint ?? 'a string') });
  if (opts.pattern) schema = schema.regex(opts.pattern, { abort: true });
  const check = opts.check;
  if (check) {
    schema = schema.superRefine((v, ctx) => {
      const refused = check(v);
      if (refused !== undefined) ctx.addIssue({ code: 'custom', message: refused });
    });
  }
  return described(schema, opts.description);
}

export function bool(description?: string) {
  return described(z.boolean({ error: expecting('true or false') }), description);
}

export function oneOf<const T extends string>(values: readonly T[], description?: string) {
  return described(z.enum(values as [T, ...T[]]), description);
}

export function list<S extends z.ZodType>(item: S, opts: { min?: number; description?: string } = {}) {
  const schema = z.array(item);
  return described(opts.min ? schema.min(opts.min) : schema, opts.description);
}

/** Two numbers [low, high] (a range's bounds): a tuple, so the type has exactly two. */
export function bounds(item: z.ZodNumber, description?: string) {
  return described(z.tuple([item, item], { error: expecting('[low, high]: a list of two numbers') }), description);
}

/** A union whose message, when no alternative gets past the value itself, lists what each expects. */
export function either<const T extends readonly [z.ZodType, z.ZodType, ...z.ZodType[]]>(options: T, phrase?: string) {
  return z.xor(options, phrase ? { error: expecting(phrase) } : undefined);
}

export function object<S extends z.core.$ZodLooseShape>(shape: S, description?: string) {
  return described(z.strictObject(shape), description);
}

/**
 * An object with names chosen by the user. A name of Object.prototype is always refused (it would
 * be dropped or shadowed); `checkKey` returns a message for any other name it refuses.
 */
export function record<S extends z.ZodType>(
  value: S,
  description: string,
  opts: { noun?: string; checkKey?: (key: string) => string | undefined } = {},
) {
  const noun = opts.noun ?? 'key';
  const key = z.string().superRefine((k, ctx) => {
    const refused = isObjectPrototypeKey(k) ? reservedKeyMessage(k, noun) : opts.checkKey?.(k);
    if (refused !== undefined) ctx.addIssue({ code: 'custom', message: refused });
  });
  // zod skips an own "__proto__" key without a word (JSON.parse and YAML both make one): refuse it first.
  const guarded = z.preprocess(
    (v, ctx) => {
      if (typeof v === 'object' && v !== null && Object.hasOwn(v, '__proto__')) {
        ctx.issues.push({
          code: 'custom',
          message: reservedKeyMessage('__proto__', noun),
          path: ['__proto__'],
          input: v,
        });
      }
      return v;
    },
    z.record(key, value),
  );
  return guarded.describe(description);
}

/** A value given as a number or as a string with units, converted by `convert`; `bound` caps the converted value. */
function unit(
  phrase: string,
  pattern: RegExp,
  convert: (v: string | number) => number | undefined,
  description: string,
  bound?: { max: number; format: (n: number) => string; why: string; min?: { value: number; why: string } },
) {
  // The bound is not in the JSON Schema: a string such as "200h" could not carry it anyway.
  const raw = either(
    [z.number({ error: expecting(phrase) }).min(0), z.string({ error: expecting(phrase) }).regex(pattern)],
    phrase,
  );
  return raw
    .transform((v, ctx) => {
      const out = convert(v);
      if (out === undefined) {
        ctx.issues.push({ code: 'custom', message: `expected ${phrase}, got ${describeValue(v)}`, input: v });
        return z.NEVER;
      }
      if (bound && out > bound.max) {
        const which = typeof v === 'string' ? `, which is ${bound.format(out)}` : '';
        ctx.issues.push({
          code: 'custom',
          message: `expected at most ${bound.format(bound.max)}, got ${describeValue(v)}${which}; ${bound.why}`,
          input: v,
        });
        return z.NEVER;
      }
      if (bound?.min && out < bound.min.value) {
        const which = typeof v === 'string' ? `, which is ${bound.format(out)}` : '';
        ctx.issues.push({
          code: 'custom',
          message: `expected at least ${bound.format(bound.min.value)}, got ${describeValue(v)}${which}; ${bound.min.why}`,
          input: v,
        });
        return z.NEVER;
      }
      return out;
    })
    .describe(description);
}

/** A size in bytes; `max` caps it, with the reason given in the message. */
export const size = (description: string, max?: { bytes: number; why: string; min?: { bytes: number; why: string } }) =>
  unit(
    'a size such as "2GiB", "800MB" or a number of bytes',
    SIZE_PATTERN,
    parseSize,
    description,
    max && {
      max: max.bytes,
      format: formatBytes,
      why: max.why,
      ...(max.min ? { min: { value: max.min.bytes, why: max.min.why } } : {}),
    },
  );

/**
 * A duration; `max` (seconds) keeps it far below the 2^31-1 ms (24.8 days) past which a Node.js
 * timer fires after 1 ms.
 */
export const duration = (description: string, max?: { seconds: number; why: string }) =>
  unit(
    'a duration such as "90s", "2m", "50ms" or a number of seconds',
    DURATION_PATTERN,
    parseDuration,
    description,
    max && { max: max.seconds, format: formatDuration, why: max.why },
  );

function formatDuration(seconds: number): string {
  const days = seconds / 86400;
  const hours = seconds / 3600;
  return (
    `${seconds} s` +
    (days >= 1
      ? ` (${+days.toFixed(2)} day${days === 1 ? '' : 's'})`
      : hours >= 1
        ? ` (${+hours.toFixed(2)} hour${hours === 1 ? '' : 's'})`
        : '')
  );
}

/**
 * Why a string cannot reach a workload: a NUL ends an environment variable and an argument (the operating
 * system cannot pass one), so it is refused here rather than by the launch after the run directory is made.
 */
export function nulProblem(v: string): string | undefined {
  const at = v.indexOf('\0');
  return at < 0
    ? undefined
    : `contains a NUL character (at ${at}), which no environment variable or argument can carry; remove it`;
}

/** A parameter value: numbers, strings and booleans, as in PyTorch's and ONNX Runtime's own names. */
export const paramValue = either([num(), str({ check: nulProblem }), bool()]);

/** An object keyed by parameter names; names that clash with JavaScript or the protocol are refused. */
export const paramRecord = <S extends z.ZodType>(value: S, description: string) =>
  record(value, description, { noun: 'parameter', checkKey: paramNameProblem });

export const paramName = (hint: string) => str({ pattern: /^[a-z][a-z0-9_]*$/, hint, check: paramNameProblem });
