// Every file the documentation names exists: paths under the project's folders in docs/ and the
// README, and each file listed in docs/architecture.md's "Where things are" under its harness folder.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../../support/paths.js';

const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const PATH =
  /\b(?:harness|test|experiments|scripts|gpu-proof|docs)\/[\w./-]*\w\.(?:ts|py|ya?ml|json|md|sh|mjs|cjs|csv)\b/g;

/** Every file under `dir`, by its base name. */
function baseNames(dir: string, into = new Set<string>()): Set<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) baseNames(path, into);
    else into.add(entry);
  }
  return into;
}

describe('the documentation', () => {
  it('names only files that exist', () => {
    const missing: string[] = [];
    let named = 0;
    for (const doc of DOCS) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      for (const [path] of text.matchAll(PATH)) {
        named += 1;
        // A path in docs/ may be written relative to docs/ (`max-batch.md`) or to the root.
        if (!existsSync(join(ROOT, path)) && !existsSync(join(ROOT, 'docs', path))) missing.push(`${doc}: ${path}`);
      }
    }
    assert.ok(named > 50, `only ${named} paths found: the pattern no longer matches the docs`);
    assert.deepEqual(missing, []);
  });

  it("lists in architecture.md's map only files that are in their folder", () => {
    const text = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const block = /## Where things are[\s\S]*?```\n([\s\S]*?)```/.exec(text)?.[1];
    assert.ok(block, 'the map of harness/ is there');
    const missing: string[] = [];
    let folder = '';
    let listed = 0;
    for (const line of block.split('\n')) {
      const head = /^ {2}([a-z]+\/|errors\.ts)/.exec(line);
      if (head) folder = head[1]!.endsWith('/') ? head[1]! : '';
      const names = baseNames(join(ROOT, 'harness', folder));
      for (const [name] of line.matchAll(/\b[\w-]+\.(?:ts|py)\b/g)) {
        listed += 1;
        if (!names.has(name)) missing.push(`harness/${folder}...${name}`);
      }
    }
    assert.ok(listed > 60, `only ${listed} files listed`);
    assert.deepEqual(missing, []);
  });
});
