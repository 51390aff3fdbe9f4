// Which arm a compare stage keeps: the fastest arm shown faster, else the baseline; and when the
// workload called empty_cache() in no arm, the baseline whatever was measured.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseArm } from '../../../harness/engine/stages/compare.js';
import type { CompareArmRow } from '../../../harness/domain/index.js';

function row(value: string, verdict: CompareArmRow['verdict'], estimate: number, calls?: number): CompareArmRow {
  const ratio =
    verdict === 'baseline'
      ? null
      : {
          estimate,
          low: estimate * 0.95,
          high: estimate * 1.05,
          level: 0.95,
          p: 0.01,
          n: 4,
          df: 3,
          se: 0.02,
          method: 'paired-t' as const,
        };
  return {
    value,
    baseline: verdict === 'baseline',
    trials: [],
    ok_trials: 4,
    failures: {},
    throughput: null,
    peak_memory: null,
    stall_fraction: null,
    throughput_ratio: ratio,
    memory_ratio: null,
    throughput_p: null,
    memory_p: null,
    decision:
      verdict === 'baseline'
        ? 'baseline'
        : verdict === 'faster'
          ? 'faster'
          : verdict === 'slower'
            ? 'slower'
            : 'undecided',
    decided_at: 4,
    verdict,
    memory_verdict: 'not measured',
    ...(calls === undefined ? {} : { empty_cache: { calls, seconds: 0 } }),
  };
}

describe('chooseArm', () => {
  it('keeps the fastest of the arms shown faster', () => {
    const rows = [row('a', 'baseline', 1), row('b', 'faster', 1.2), row('c', 'faster', 1.4), row('d', 'slower', 0.8)];
    const c = chooseArm(rows, 'x');
    assert.equal(c.chosen.value, 'c');
    assert.equal(c.nameOnly, false);
    assert.deepEqual(c.flagged, []);
  });

  it('keeps the baseline when no arm is shown faster', () => {
    const c = chooseArm(
      [row('a', 'no significant difference', 1.1), row('b', 'baseline', 1), row('c', 'slower', 0.7)],
      'x',
    );
    assert.equal(c.chosen.value, 'b');
    assert.equal(c.faster, undefined);
  });

  it(
    'keeps the baseline when the policies differ in name only, ' + 'and flags the arms the machine made look different',
    () => {
      const rows = [
        row('never', 'baseline', 1, 0),
        row('every-step', 'faster', 1.3, 0),
        row('on-oom', 'slower', 0.87, 0),
        row('every-10', 'no significant difference', 1, 0),
      ];
      const c = chooseArm(rows, 'empty_cache');
      assert.equal(c.chosen.value, 'never');
      assert.equal(c.faster, undefined);
      assert.equal(c.nameOnly, true);
      assert.deepEqual(
        c.flagged.map((r) => r.value),
        ['every-step', 'on-oom'],
      );
    },
  );

  it('believes a speed-up when some arm did call empty_cache()', () => {
    const c = chooseArm([row('never', 'baseline', 1, 0), row('every-step', 'faster', 1.3, 12)], 'empty_cache');
    assert.equal(c.chosen.value, 'every-step');
    assert.equal(c.nameOnly, false);
  });

  it('believes a speed-up of another parameter (an allocator setting) when no arm called empty_cache()', () => {
    const c = chooseArm([row('', 'baseline', 1, 0), row('expandable_segments:True', 'faster', 1.2, 0)], 'alloc_conf');
    assert.equal(c.chosen.value, 'expandable_segments:True');
    assert.equal(c.nameOnly, false);
    assert.deepEqual(c.flagged, []);
  });
});
