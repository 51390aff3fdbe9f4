// A trial's throughput and stall from its steps, and step latency percentiles.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stepLatency } from '../../../harness/stats/summary.js';
import { ratioThroughput, stallFraction } from '../../../harness/stats/throughput.js';

describe('step summaries', () => {
  it('measures throughput as total samples over total time, so a stall counts in full', () => {
    const steps = [0.1, 0.1, 0.1, 9.7].map((seconds) => ({ samples: 10, seconds }));
    assert.equal(ratioThroughput(steps), 4);
    assert.equal(
      stallFraction([
        { samples: 1, seconds: 2, data_wait_seconds: 1.5 },
        { samples: 1, seconds: 2, data_wait_seconds: 0.5 },
      ]),
      0.5,
    );
    assert.equal(stallFraction([{ samples: 1, seconds: 2 }]), null, 'no data-wait reported');
    // Linear interpolation between order statistics (Hyndman & Fan type 7): 1 + 0.95 * (3 - 1).
    assert.deepEqual(
      stepLatency([
        { samples: 1, seconds: 1 },
        { samples: 1, seconds: 3 },
      ]),
      { median: 2, p95: 2.9 },
    );
    assert.equal(ratioThroughput([]), null);
  });

  it('never returns a non-finite throughput or stall, whatever the steps hold (issue 15, item 8)', () => {
    assert.equal(ratioThroughput([{ samples: 1e300, seconds: 1e-300 }]), null, 'overflows to Infinity');
    assert.equal(
      ratioThroughput([
        { samples: 1.7e308, seconds: 1 },
        { samples: 1.7e308, seconds: 1 },
      ]),
      null,
      'the sum overflows',
    );
    assert.equal(ratioThroughput([{ samples: Number.NaN, seconds: 1 }]), null);
    assert.equal(ratioThroughput([{ samples: 8, seconds: Number.POSITIVE_INFINITY }]), null);
    assert.equal(stallFraction([{ samples: 1, seconds: 1e-300, data_wait_seconds: 1e300 }]), null);
    assert.equal(stallFraction([{ samples: 1, seconds: 1, data_wait_seconds: Number.POSITIVE_INFINITY }]), null);
    assert.equal(stallFraction([{ samples: 1, seconds: 1, data_wait_seconds: -0.5 }]), null);
  });
});
