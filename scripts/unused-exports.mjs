// Exports of harness/ that nothing uses: read with TypeScript's checker over harness/ and test/, so a
// re-export through an index, a namespace import and a type-only import all count as the use they are.
// `npm run lint` runs it on the sources (no build needed); test/unit/code/exports.test.ts runs it too,
// with a control that it finds what it must.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function sources(dir, into = []) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sources(path, into);
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) into.push(path);
  }
  return into;
}

/** The original declaration's symbol behind an import or a re-export. */
const original = (checker, s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);

/**
 * `file:name` of every export declared in a file `declaredIn` accepts that nothing among `files` uses: not
 * another file, not its own file beyond its declaration. Re-exports (an index's `export ... from`) are not
 * exports of their own: the symbol they pass on is the one that must be used somewhere.
 */
export function unusedExports(files, declaredIn) {
  const program = ts.createProgram([...files], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const mine = program.getSourceFiles().filter((f) => !f.isDeclarationFile && files.includes(f.fileName));
  const exported = new Map();
  for (const f of mine) {
    if (!declaredIn(f.fileName)) continue;
    const moduleSymbol = checker.getSymbolAtLocation(f);
    if (!moduleSymbol) continue;
    for (const s of checker.getExportsOfModule(moduleSymbol)) {
      const o = original(checker, s);
      const decl = o.declarations?.[0];
      // Declared in this file (not passed on from another one).
      if (decl && decl.getSourceFile() === f) exported.set(o, `${relative(ROOT, f.fileName)}:${s.name}`);
    }
  }
  const used = new Set();
  for (const f of mine) {
    const visit = (node) => {
      if (ts.isIdentifier(node)) {
        const s = checker.getSymbolAtLocation(node);
        if (s) {
          const o = original(checker, s);
          // Any use but the declaration's own name.
          if (exported.has(o) && !o.declarations?.some((d) => d.name === node)) used.add(o);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(f);
  }
  return [...exported].filter(([s]) => !used.has(s)).map(([, name]) => name);
}

/** The project's check: exports of harness/ that nothing in harness/ or test/ uses, sorted. */
export function unusedHarnessExports() {
  const files = [...sources(join(ROOT, 'harness')), ...sources(join(ROOT, 'test'))];
  const harness = join(ROOT, 'harness') + '/';
  return unusedExports(files, (f) => f.startsWith(harness)).sort();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const unused = unusedHarnessExports();
  if (unused.length > 0) {
    process.stderr.write(
      `unused exports: ${unused.length} export(s) of harness/ that nothing uses; remove them, or the export keyword:\n` +
        unused.map((u) => `  ${u}\n`).join(''),
    );
    process.exit(1);
  }
  process.stdout.write('unused exports: none\n');
}
