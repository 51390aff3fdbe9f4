// The seconds the rest of a max-batch search takes, from what its trials cost.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { remainingSeconds } from '../../../harness/search/eta.js';
import type { ProbeResult } from '../../../harness/search/probe.js';

const probe = (batch: number, seconds: number, p50: number, long = false): ProbeResult => ({
  batch,
  ok: true,
  outcome: 'ok',
  limitedBytes: null,
  rssBytes: null,
  samplesPerSecond: null,
  p50Seconds: p50,
  p95Seconds: p50,
  role: long ? 'confirm' : 'probe',
  seconds,
  ...(long ? { growth: { verdict: 'plateau' as const, at_step: 60, peak_bytes: 1, source: 'workload' as const } } : {}),
});

describe('remaining seconds of a max-batch search', () => {
  it('prices a run until memory flattens by its extra steps at the step time of the largest batch that ran', () => {
    // Two short probes of 3 steps (10 s each); the largest ran 2 s a step; a long run has 61 steps.
    const s = remainingSeconds([probe(8, 10, 0.1), probe(64, 10, 2)], { short: 2, long: 1 }, { short: 3, long: 61 });
    assert.equal(s, 2 * 10 + (10 + 58 * 2));
  });
  it('takes a long run that happened at its cost, and knows nothing before any trial', () => {
    const s = remainingSeconds(
      [probe(8, 10, 0.1), probe(64, 300, 2, true)],
      { short: 1, long: 2 },
      { short: 3, long: 61 },
    );
    assert.equal(s, 10 + 2 * 300);
    assert.equal(remainingSeconds([], { short: 1, long: 1 }, { short: 3, long: 61 }), undefined);
  });
});
