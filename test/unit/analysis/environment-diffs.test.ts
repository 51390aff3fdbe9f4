// Environment differences are typed facts (field, package) with a sentence for the reader; history
// and resume filter on the field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { environmentDiffs, environmentDifferences } from '../../../harness/analysis/compare-runs.js';
import type { Fingerprint } from '../../../harness/domain/index.js';

const base = {
  host: 'node1',
  cpu: { model: 'AMD EPYC', cores: 2 },
  gpu: null,
  memory_bytes: 24 * 2 ** 30,
  kernel: '6.1.0',
  versions: { node: '20.20.0', torch: '1.13.0' },
} as unknown as Fingerprint;

describe('environment differences', () => {
  it('name the field that differs, and the package of a version, with the sentence printed', () => {
    const after = { ...base, host: 'node2', versions: { node: '20.20.0', torch: '2.1.0' } } as Fingerprint;
    const diffs = environmentDiffs(base, after);
    assert.deepEqual(
      diffs.map((d) => [d.field, d.name]),
      [
        ['host', undefined],
        ['version', 'torch'],
      ],
    );
    assert.deepEqual(environmentDifferences(base, after), [
      'host differs: "node1" before, "node2" after',
      'torch version differs: "1.13.0" before, "2.1.0" after',
    ]);
    assert.deepEqual(environmentDiffs(base, base), []);
  });

  it('say when a fingerprint is missing', () => {
    assert.deepEqual(
      environmentDiffs(base, undefined).map((d) => d.field),
      ['fingerprint'],
    );
  });
});
