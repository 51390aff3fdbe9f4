// Argument templates such as "--batch-size={batch_size}": each placeholder becomes the parameter's
// value inside that one argument. Values are never parsed by a shell, so "; rm -rf /" stays text.

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Names used by the templates, for validation. */
export function templateNames(templates: readonly string[]): string[] {
  const names = new Set<string>();
  for (const t of templates) for (const m of t.matchAll(PLACEHOLDER)) names.add(m[1]!);
  return [...names];
}

/** Substitutes placeholders; a name without a value is an error that names the argument. */
export function expandArgs(templates: readonly string[], values: Readonly<Record<string, unknown>>): string[] {
  return templates.map((t) =>
    t.replace(PLACEHOLDER, (_, name: string) => {
      const v = values[name];
      if (v === undefined) throw new Error(`argument ${JSON.stringify(t)} uses {${name}}, which has no value in this config`);
      return String(v);
    }),
  );
}
