// A trial's timeline from the harness's clock and the times the workload's events carry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trialTimeline } from '../../../harness/trial/timeline.js';
import type { WorkloadEvent } from '../../../harness/workloads/protocol/events.js';

const T = 1_800_000_000; // unix seconds
const clock = { launchMs: T * 1000, startedMs: T * 1000 + 50, exitMs: T * 1000 + 9100, endMs: T * 1000 + 9130 };

describe('trial timeline', () => {
  it('places setup, build, warm-up, steps, finish and teardown from the events, and the harness around them', () => {
    const events: WorkloadEvent[] = [
      { event: 'mark', name: 'start', t: T + 0.55 },
      { event: 'step', samples: 8, seconds: 0.5, warmup: true, t: T + 7.05 }, // first step began at 6.55
      { event: 'step', samples: 8, seconds: 0.4, t: T + 7.45 },
      { event: 'step', samples: 8, seconds: 0.4, t: T + 7.85 },
      { event: 'done', t: T + 8.0 },
    ];
    const t = trialTimeline(clock, events);
    assert.equal(t.launch, 0.05);
    assert.equal(t.setup, 0.5);
    assert.equal(t.build, 6);
    assert.equal(t.warmup, 0.5);
    assert.equal(t.steps, 0.8);
    assert.equal(t.finish, 0.15);
    assert.equal(t.teardown, 1.1);
    assert.equal(t.after_exit, 0.03);
    assert.equal(t.harness, 0.08);
    // Every part is placed: the sum is the wall time.
    assert.ok(t.unaccounted < 0.005, `unaccounted ${t.unaccounted}`);
  });

  it('leaves the parts it cannot place null, and their time unaccounted (a program without the adapter)', () => {
    const t = trialTimeline(clock, [{ event: 'step', samples: 8, seconds: 1 }]);
    assert.equal(t.setup, null);
    assert.equal(t.build, null);
    assert.equal(t.finish, null);
    assert.equal(t.steps, 1);
    assert.ok(Math.abs(t.unaccounted - (9.13 - 0.05 - 1 - 0.03)) < 0.01, `unaccounted ${t.unaccounted}`);
  });
});
