// No dead exports: every symbol harness/ exports is used somewhere (its own file, another of harness/, or a
// test), read with TypeScript's checker by scripts/unused-exports.mjs, which `npm run lint` runs too.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { unusedExportsScript } from '../../support/unused-exports.js';

describe('the exports of harness/', () => {
  it('has no export that nothing uses', async () => {
    const { unusedHarnessExports } = await unusedExportsScript();
    assert.deepEqual(unusedHarnessExports(), []);
  });

  it('the check finds a dead function, a dead type and a dead constant, and passes a re-export that is used', async () => {
    const { unusedExports } = await unusedExportsScript();
    const dir = mkdtempSync(join(tmpdir(), 'tunebench-exports-'));
    try {
      const lib = join(dir, 'lib.ts');
      const index = join(dir, 'index.ts');
      const user = join(dir, 'user.ts');
      writeFileSync(
        lib,
        [
          'export function dead(): number { return 1; }',
          'export type DeadType = { a: number };',
          'export const DEAD = 3;',
          'export const viaIndex = 4;',
          'export const usedHere = 5;',
          'export const alsoHere = usedHere + 1;',
          'export type UsedType = { b: number };',
        ].join('\n'),
      );
      writeFileSync(index, "export * from './lib.js';\n");
      writeFileSync(
        user,
        "import { viaIndex, alsoHere } from './index.js';\nimport type { UsedType } from './lib.js';\n" +
          'export const total: UsedType = { b: viaIndex + alsoHere };\n',
      );
      const found = unusedExports([lib, index, user], (f) => f === lib).map((s) => s.split(':').pop());
      assert.deepEqual(found.sort(), ['DEAD', 'DeadType', 'dead']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
