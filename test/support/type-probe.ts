// Which fields of a TypeScript type a function handed a value of it could write, with the compiler as the
// judge: for each field (and each field of a field), a probe file assigns to it, and every assignment the
// compiler accepts is a mutable field. Methods are behaviour, not state: they are not probed.
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from './paths.js';

const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: true,
  noEmit: true,
  types: ['node'],
};

/**
 * The compiler's refusals of a write to something read-only: 2540 a read-only property, 2542 an index
 * signature that only permits reading, 2339 `push` on a readonly array (it has none).
 */
const READ_ONLY_ERRORS = new Set([2540, 2542, 2339]);

/** A probe's line: the statement and the field path it writes. */
interface Probe {
  path: string;
  statement: string;
}

/** The writes to try on `v`, a value of type `t` reached by `path`, down to `depth` levels of fields. */
function probesOf(
  checker: ts.TypeChecker,
  t: ts.Type,
  path: string,
  depth: number,
  shallow: readonly string[] = [],
): Probe[] {
  const out: Probe[] = [];
  const base = checker.getNonNullableType(t);
  if (checker.isArrayType(base) || checker.isTupleType(base)) {
    out.push({ path: `${path}[]`, statement: `v${path}.push(undefined as never);` });
    // Its elements' fields, one level less deep.
    const element = checker.getIndexTypeOfType(base, ts.IndexKind.Number);
    if (element && depth > 1) out.push(...probesOf(checker, element, `${path}[0]!`, depth - 1, shallow));
    return out;
  }
  // An object, or a union of objects (a stage outcome of any kind): the fields they share.
  const objects = base.isUnion() ? base.types : [base];
  if (!objects.every((m) => m.flags & ts.TypeFlags.Object)) return out;
  if (base.getCallSignatures().length > 0) return out;
  if (checker.getIndexInfosOfType(base).length > 0)
    out.push({ path: `${path}[key]`, statement: `v${path}['__probe__'] = undefined as never;` });
  for (const p of base.getProperties()) {
    if (p.flags & ts.SymbolFlags.Method) continue;
    const field = `${path}.${p.name}`;
    const decl = p.valueDeclaration ?? p.declarations?.[0];
    // A private field is no one's but its class's.
    if (decl && ts.getCombinedModifierFlags(decl) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    const pt = decl ? checker.getTypeOfSymbolAtLocation(p, decl) : checker.getTypeOfSymbol(p);
    // A property holding a function is a method too (an arrow function on an object).
    if (checker.getNonNullableType(pt).getCallSignatures().length > 0) continue;
    if (!/^[A-Za-z_$][\w$]*$/.test(p.name)) continue;
    out.push({ path: field, statement: `v${field} = undefined as never;` });
    // A behaviour (an object that owns state behind its methods) is probed for its own fields only.
    const below = shallow.includes(field) ? Math.min(depth - 1, 1) : depth - 1;
    if (below > 0) out.push(...probesOf(checker, pt, optionalChainFree(field), below, shallow));
  }
  return out;
}

/** A compiler host that also serves `probeFile`, which exists only as `text`. */
function withProbe(host: ts.CompilerHost, probeFile: string, text: string): ts.CompilerHost {
  return {
    ...host,
    fileExists: (f) => f === probeFile || host.fileExists(f),
    readFile: (f) => (f === probeFile ? text : host.readFile(f)),
    getSourceFile: (f, lang, onError, fresh) =>
      f === probeFile ? ts.createSourceFile(f, text, lang) : host.getSourceFile(f, lang, onError, fresh),
  };
}

/** Field paths are written with `!` so that an optional field's own fields can be probed. */
const optionalChainFree = (path: string) => `${path}!`;

/**
 * The writable fields of the exported type `name` of `file` (relative to the repository), down to `depth`
 * levels: `.a` is the field itself, `.a.b` a field of it, `.a.b[]` an array that can grow, `[key]` a
 * record that takes new keys, `[i]` an element. Fields named in `shallow` (`.trials`) are probed for
 * their own fields only. Empty when the compiler refuses every write.
 */
export function writableFields(
  file: string,
  name: string,
  o: { depth: number; shallow?: readonly string[] } = { depth: 2 },
): string[] {
  const abs = join(ROOT, file);
  const probeFile = join(dirname(abs), '__type_probe__.ts');
  const spec = `./${relative(dirname(abs), abs).replace(/\.ts$/, '.js')}`;
  const host = ts.createCompilerHost(OPTIONS);
  const first = ts.createProgram([abs], OPTIONS, host);
  const checker = first.getTypeChecker();
  const source = first.getSourceFile(abs);
  if (!source) throw new Error(`${file}: not found`);
  const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).find((s) => s.name === name);
  if (!exported) throw new Error(`${file} exports no ${name}`);
  const type = checker.getDeclaredTypeOfSymbol(exported);
  const probes = probesOf(checker, type, '', o.depth, o.shallow);
  const head = `import type { ${name} } from '${spec}';\ndeclare const v: ${name};\n`;
  // Each write in a function of its own: an assignment narrows the field's type for the lines after it.
  const text = head + probes.map((p, i) => `export function probe${i}(): void { ${p.statement} }\n`).join('');
  const program = ts.createProgram([probeFile], OPTIONS, withProbe(host, probeFile, text), first);
  const probeSource = program.getSourceFile(probeFile)!;
  const refused = new Set<number>();
  for (const d of program.getSemanticDiagnostics(probeSource)) {
    const line = d.start === undefined ? -1 : probeSource.getLineAndCharacterOfPosition(d.start).line;
    // Only "read-only" refusals count: any other error means the probe itself is wrong.
    if (!READ_ONLY_ERRORS.has(d.code))
      throw new Error(
        `type probe of ${name}, line ${line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
      );
    refused.add(line);
  }
  const headLines = head.split('\n').length - 1;
  return probes
    .filter((_, i) => !refused.has(headLines + i))
    .map((p) => p.path.replace(/!/g, '').replace(/\[0\]/g, '[i]'));
}

/**
 * The compiler's errors for `lines` compiled as one file beside `file` (relative to the repository), by
 * line (0-based, after `head`): each line in a function of its own, so a line's error is its own.
 */
export function errorsByLine(file: string, head: string, lines: readonly string[]): Map<number, string[]> {
  const abs = join(ROOT, file);
  const probeFile = join(dirname(abs), '__type_probe__.ts');
  const text = head + lines.map((l, i) => `export function probe${i}(): void { ${l} }\n`).join('');
  const program = ts.createProgram([probeFile], OPTIONS, withProbe(ts.createCompilerHost(OPTIONS), probeFile, text));
  const source = program.getSourceFile(probeFile)!;
  const headLines = head.split('\n').length - 1;
  const out = new Map<number, string[]>();
  for (const d of program.getSemanticDiagnostics(source)) {
    const line = (d.start === undefined ? -1 : source.getLineAndCharacterOfPosition(d.start).line) - headLines;
    out.set(line, [...(out.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, ' ')]);
  }
  return out;
}
