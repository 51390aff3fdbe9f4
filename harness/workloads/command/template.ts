// Argument templates such as "--batch-size={batch_size}": each placeholder becomes the parameter's
// value inside that one argument. Values are never parsed by a shell, so "; rm -rf /" stays text.
//
//   {name}            the value; no value is an error that names the argument
//   {name:-text}      the value, else `text` (inserted as text; the trial's config does not gain it)
//   {name?}           the value, else the whole argument is left out
//   {name?--flag}     `--flag` when the value is true (true, "true", 1); the argument is left out when
//                     it is false (false, "false", 0) or absent; any other value is an error
//
// An argument left out by `{name?}` takes a bare option just before it with it, so
// ["--prefetch-factor", "{prefetch_factor?}"] leaves out both.

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-)([^{}]*)|(\?)([^{}]*))?\}/g;
/** An argument that is one `{name?}` and nothing else. */
const WHOLE_OPTIONAL = /^\{[A-Za-z_][A-Za-z0-9_]*\?\}$/;

export type PlaceholderForm = 'required' | 'default' | 'optional' | 'flag';

export interface Placeholder {
  name: string;
  form: PlaceholderForm;
  /** The default text or the flag. */
  text?: string;
  /** The placeholder as written, e.g. "{pin_memory?--pin-memory}". */
  source: string;
}

/** The placeholders of one template, in order. */
export function placeholders(template: string): Placeholder[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => {
    const [source, name, dash, fallback, question, flag] = m;
    if (dash) return { name: name!, form: 'default' as const, text: fallback ?? '', source };
    if (question && flag) return { name: name!, form: 'flag' as const, text: flag, source };
    if (question) return { name: name!, form: 'optional' as const, source };
    return { name: name!, form: 'required' as const, source };
  });
}

/** A flag's state: true for true, "true" and 1; false for false, "false", 0 and no value; else undefined. */
export function flagState(value: unknown): boolean | undefined {
  if (value === undefined || value === false || value === 'false' || value === 0) return false;
  if (value === true || value === 'true' || value === 1) return true;
  return undefined;
}

/** One template with its placeholders filled; undefined when the argument is left out. */
export function expandArg(template: string, values: Readonly<Record<string, unknown>>): string | undefined {
  let omitted = false;
  const text = template.replace(
    PLACEHOLDER,
    (source: string, name: string, dash?: string, fallback?: string, question?: string, flag?: string) => {
      const v = Object.hasOwn(values, name) ? values[name] : undefined;
      if (question && flag) {
        const on = flagState(v);
        if (on === undefined)
          throw new Error(
            `argument ${JSON.stringify(template)} is the flag ${source}: ` +
              `{${name}} must be true or false (or 1/0), got ${JSON.stringify(v)}`,
          );
        if (!on) omitted = true;
        return flag;
      }
      if (v !== undefined) return String(v);
      if (dash) return fallback ?? '';
      if (question) {
        omitted = true;
        return '';
      }
      throw new Error(
        `argument ${JSON.stringify(template)} uses {${name}}, which has no value in this config; ` +
          `give it a default {${name}:-value} or make it optional {${name}?}`,
      );
    },
  );
  return omitted ? undefined : text;
}

/** Substitutes placeholders; arguments whose optional parameter has no value are left out. */
export function expandArgs(templates: readonly string[], values: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  let previousKept = false;
  templates.forEach((t, i) => {
    const v = expandArg(t, values);
    if (v !== undefined) {
      out.push(v);
      previousKept = true;
      return;
    }
    if (previousKept && WHOLE_OPTIONAL.test(t) && isBareOption(templates[i - 1]!)) out.pop();
    previousKept = false;
  });
  return out;
}

/** "--prefetch-factor": an option without a value of its own and without placeholders. */
function isBareOption(template: string): boolean {
  return /^-{1,2}[A-Za-z]/.test(template) && !template.includes('=') && placeholders(template).length === 0;
}

/**
 * How many leading templates are the program (interpreter, script, fixed arguments): those without
 * a parameter placeholder ("{python}" counts as none), up to the first templated argument or the
 * bare option just before it ("--batch-size", "{batch_size}").
 */
export function programLength(templates: readonly string[]): number {
  const first = templates.findIndex((t) => placeholders(t).some((p) => p.name !== 'python'));
  if (first < 0) return templates.length;
  return first > 0 && isBareOption(templates[first - 1]!) ? first - 1 : first;
}
