// Exports of harness/ that no other file uses: read with TypeScript's checker over harness/ and test/, so a
// re-export through an index, a namespace import and a type-only import all count as the use they are.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from './paths.js';

function sources(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sources(path, into);
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) into.push(path);
  }
  return into;
}

/** The original declaration's symbol behind an import or a re-export. */
function original(checker: ts.TypeChecker, s: ts.Symbol): ts.Symbol {
  return s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
}

/**
 * `file:name` of every export declared in `declaredIn` (files) that no file other than its own refers to,
 * among `files` (all the program's files). Re-exports (an index's `export ... from`) are not exports of
 * their own: the symbol they pass on is the one that must be used somewhere.
 */
export function unusedExports(files: readonly string[], declaredIn: (file: string) => boolean): string[] {
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
  const exported = new Map<ts.Symbol, string>();
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
  const used = new Set<ts.Symbol>();
  for (const f of mine) {
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) {
        const s = checker.getSymbolAtLocation(node);
        if (s) {
          const o = original(checker, s);
          // Any use but the declaration's own name: a use in its own file makes the export needless, not dead.
          if (exported.has(o) && !o.declarations?.some((d) => (d as ts.NamedDeclaration).name === node)) used.add(o);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(f);
  }
  return [...exported].filter(([s]) => !used.has(s)).map(([, name]) => name);
}

/** The project's check: exports of harness/ that nothing in harness/ or test/ uses. */
export function unusedHarnessExports(): string[] {
  const files = [...sources(join(ROOT, 'harness')), ...sources(join(ROOT, 'test'))];
  const harness = join(ROOT, 'harness') + '/';
  return unusedExports(files, (f) => f.startsWith(harness)).sort();
}
