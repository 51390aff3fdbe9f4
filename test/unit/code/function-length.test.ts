// Short functions with one job: no function, method or arrow function of harness/ is longer than
// 100 lines (from its first line to its closing brace), read with TypeScript's own parser.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { ROOT } from '../../support/paths.js';

const MAX_LINES = 100;

function sources(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sources(path, into);
    else if (entry.endsWith('.ts')) into.push(path);
  }
  return into;
}

/** Every function of a source text longer than `max` lines, as "file:line name (n lines)". */
export function longFunctions(file: string, text: string, max: number): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node)
    ) {
      const first = src.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = src.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named =
        node.name ??
        (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name : undefined);
      const name = named && ts.isIdentifier(named) ? named.text : '(anonymous)';
      if (last - first + 1 > max) out.push(`${file}:${first + 1} ${name} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

describe('the code of harness/', () => {
  it(`has no function longer than ${MAX_LINES} lines`, () => {
    const files = sources(join(ROOT, 'harness'));
    assert.ok(files.length > 150, `only ${files.length} files found`);
    const long = files.flatMap((f) => longFunctions(relative(ROOT, f), readFileSync(f, 'utf8'), MAX_LINES));
    assert.deepEqual(long, []);
  });

  it('the check finds a long function, an arrow function and a method', () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  x += ${i};`).join('\n');
    const text = [
      `function long() {\n  let x = 0;\n${body}\n}`,
      `const arrow = () => {\n${body}\n};`,
      `class C {\n  m() {\n${body}\n  }\n}`,
      'function short() {\n  return 1;\n}',
    ].join('\n');
    assert.deepEqual(
      longFunctions('t.ts', text, MAX_LINES).map((l) => l.replace(/ \(\d+ lines\)$/, '')),
      ['t.ts:1 long', `t.ts:${MAX_LINES + 4} arrow`, `t.ts:${2 * MAX_LINES + 7} m`],
    );
  });
});
