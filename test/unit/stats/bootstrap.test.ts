// The seeded bootstrap interval of a median.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootstrapMedian } from '../../../harness/stats/bootstrap.js';
import { medianThroughput, stepLatency } from '../../../harness/stats/summary.js';

describe('bootstrapMedian', () => {
  const values = Array.from({ length: 41 }, (_, i) => 100 + i);
  it('brackets the sample median and is reproducible with a seed', () => {
    const a = bootstrapMedian(values, { seed: 7 })!;
    const b = bootstrapMedian(values, { seed: 7 })!;
    assert.deepEqual(a, b);
    assert.equal(a.estimate, 120);
    assert.ok(a.low < 120 && a.high > 120);
    // For n = 41 the 95% interval of the median spans roughly the 14th..28th order statistics.
    assert.ok(a.low >= 110 && a.high <= 130, `${a.low}..${a.high}`);
  });
  it('collapses for constant data and a single value', () => {
    assert.deepEqual(bootstrapMedian([5, 5, 5]), { estimate: 5, low: 5, high: 5, level: 0.95 });
    assert.deepEqual(bootstrapMedian([3]), { estimate: 3, low: 3, high: 3, level: 0.95 });
    assert.equal(bootstrapMedian([]), null);
  });
});

describe('step summaries', () => {
  it('uses the median of per-step rates, robust to one slow step', () => {
    const steps = [0.1, 0.1, 0.1, 10].map((seconds) => ({ samples: 10, seconds }));
    assert.equal(medianThroughput(steps), 100);
    // Linear interpolation between order statistics (Hyndman & Fan type 7): 1 + 0.95 * (3 - 1).
    assert.deepEqual(stepLatency([{ samples: 1, seconds: 1 }, { samples: 1, seconds: 3 }]), { median: 2, p95: 2.9 });
    assert.equal(medianThroughput([]), null);
  });
});
