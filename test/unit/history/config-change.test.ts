// A chosen value that flipped between configs tied within the noise band is not a config change (no exit
// 4); one the night decided is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tiedBy } from '../../../harness/history/config-change.js';
import type { StageOutcome } from '../../../harness/experiment/schema.js';

const sweep = (tied: string[]): StageOutcome =>
  ({
    kind: 'sweep',
    name: 'loader',
    chosen: { num_workers: 2 },
    evidence: {},
    notes: [],
    result: {
      configs: [
        { key: 'num_workers=0', config: { num_workers: 0 } },
        { key: 'num_workers=2', config: { num_workers: 2 } },
      ],
      chosen_key: 'num_workers=2',
      tied,
    },
  }) as unknown as StageOutcome;

const compare = (decision: string): StageOutcome =>
  ({
    kind: 'compare',
    name: 'arena',
    chosen: { arena: 'off' },
    evidence: {},
    notes: [],
    result: {
      param: 'arena',
      arms: [
        { value: 'keep', baseline: true, decision: 'baseline', verdict: 'baseline' },
        {
          value: 'off',
          baseline: false,
          decision,
          verdict: decision === 'faster' ? 'faster' : 'no significant difference',
        },
      ],
    },
  }) as unknown as StageOutcome;

describe('tiedBy', () => {
  it("calls a sweep value tied with tonight's choice a tie, and one outside the tie a change", () => {
    const change = { param: 'num_workers', before: 0, after: 2 };
    assert.match(tiedBy(change, [sweep(['num_workers=2', 'num_workers=0'])]) ?? '', /num_workers=0 is tied/);
    assert.equal(tiedBy(change, [sweep(['num_workers=2'])]), null);
  });

  it('calls a compare arm shown faster than the baseline kept before a change, and an undecided one a tie', () => {
    const change = { param: 'arena', before: 'keep', after: 'off' };
    assert.equal(tiedBy(change, [compare('faster')]), null);
    assert.match(tiedBy(change, [compare('undecided')]) ?? '', /neither shown faster than the other/);
  });

  it('calls a different max batch a change', () => {
    const mb = { kind: 'max-batch', name: 'mb', chosen: { batch_size: 64 }, result: {} } as unknown as StageOutcome;
    assert.equal(tiedBy({ param: 'batch_size', before: 72, after: 64 }, [mb]), null);
  });
});
