// The claim sentence names each side by the parameters it sets: never "undefined" for a parameter one side lacks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeSide } from '../../../harness/engine/stages/claim.js';

describe('claim sides in the sentence', () => {
  const changed = ['num_workers', 'prefetch_factor'];

  it('shows a parameter only on the side that has it', () => {
    const baseline = describeSide({ batch_size: 64, num_workers: 0 }, changed);
    const candidate = describeSide({ batch_size: 64, num_workers: 2, prefetch_factor: 4 }, changed);
    assert.equal(`${baseline} -> ${candidate}`, 'num_workers=0 -> num_workers=2 prefetch_factor=4');
    assert.doesNotMatch(baseline, /undefined/);
  });

  it('says "(as fixed)" for a side that sets nothing, and shows its own command', () => {
    assert.equal(describeSide({ batch_size: 64 }, ['prefetch_factor']), '(as fixed)');
    assert.equal(
      describeSide({ prefetch_factor: 4 }, ['prefetch_factor'], ['python3', 'tok.py', '--fast']),
      '`python3 tok.py --fast` prefetch_factor=4',
    );
    assert.equal(describeSide({ pin_memory: false }, ['pin_memory']), 'pin_memory=false', 'false and 0 are values');
  });
});
