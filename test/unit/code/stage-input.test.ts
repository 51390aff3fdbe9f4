// A stage is a function: what it is handed (StageInput) and the run's state between stages (RunState)
// have no field that the code handed them could write, at any depth, asked of the compiler itself
// (test/support/type-probe.ts). The trial runner and the progress are the two behaviours a stage is
// handed: their own fields are read-only, their state is theirs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { writableFields } from '../../support/type-probe.js';
import type { ProbeFixture } from '../../support/type-probe-fixture.js';

const DEPTH = 6;

describe('the types a stage is handed', () => {
  it('StageInput: no field a stage could write, at any depth', () => {
    const writable = writableFields('harness/engine/context.ts', 'StageInput', {
      depth: DEPTH,
      shallow: ['.trials', '.progress', '.trial.warm', '.trial.signal'],
    });
    assert.deepEqual(writable, []);
  });

  it("RunState: the run's config, outcomes, evidence and failures change only through revise()", () => {
    assert.deepEqual(writableFields('harness/engine/revisions.ts', 'RunState', { depth: DEPTH }), []);
  });

  it('the probe finds a writable field, a growable array, a nested field and an element field', () => {
    const fixture: Pick<ProbeFixture, 'count'> = { count: 1 };
    assert.equal(fixture.count, 1);
    assert.deepEqual(writableFields('test/support/type-probe-fixture.ts', 'ProbeFixture', { depth: DEPTH }), [
      '.count',
      '.list[]',
      '.nested.label',
      '.items[i].id',
    ]);
  });
});
