// The seeded bootstrap interval of a median.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootstrapMedian } from '../../../harness/stats/bootstrap.js';
import { stepLatency } from '../../../harness/stats/summary.js';
import { ratioInterval, ratioThroughput, stallFraction, throughputInterval } from '../../../harness/stats/throughput.js';

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
  it('measures throughput as total samples over total time, so a stall counts in full', () => {
    const steps = [0.1, 0.1, 0.1, 9.7].map((seconds) => ({ samples: 10, seconds }));
    assert.equal(ratioThroughput(steps), 4);
    assert.equal(stallFraction([{ samples: 1, seconds: 2, data_wait_seconds: 1.5 }, { samples: 1, seconds: 2, data_wait_seconds: 0.5 }]), 0.5);
    assert.equal(stallFraction([{ samples: 1, seconds: 2 }]), null, 'no data-wait reported');
    // Linear interpolation between order statistics (Hyndman & Fan type 7): 1 + 0.95 * (3 - 1).
    assert.deepEqual(stepLatency([{ samples: 1, seconds: 1 }, { samples: 1, seconds: 3 }]), { median: 2, p95: 2.9 });
    assert.equal(ratioThroughput([]), null);
  });
});

describe('hierarchical throughput intervals', () => {
  const trial = (rate: number, n = 20) => Array.from({ length: n }, (_, i) => ({ samples: 100, seconds: 100 / (rate * (1 + ((i % 5) - 2) * 0.01)) }));
  it('brackets the pooled throughput and widens with spread between trials', () => {
    const tight = throughputInterval([trial(1000), trial(1000), trial(1000)], { seed: 3 })!;
    const spread = throughputInterval([trial(800), trial(1000), trial(1200)], { seed: 3 })!;
    assert.ok(tight.low < 1000 && tight.high > 1000 && tight.high - tight.low < 20);
    assert.ok(spread.high - spread.low > 5 * (tight.high - tight.low), 'variance between processes is counted');
  });
  it('gives the ratio of two configs with a CI excluding 1 when they differ', () => {
    const r = ratioInterval([trial(1000), trial(1000)], [trial(1100), trial(1100)], { seed: 2 })!;
    assert.ok(Math.abs(r.estimate - 1.1) < 0.01);
    assert.ok(r.low > 1);
    const same = ratioInterval([trial(1000), trial(1000)], [trial(1000), trial(1000)], { seed: 2 })!;
    assert.ok(same.low <= 1 && same.high >= 1);
  });
});
