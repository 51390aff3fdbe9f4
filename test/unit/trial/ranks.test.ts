// A trial's steps and memory from the events of one process or of N ranks (workload.launcher).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rankOf, summarizeEvents } from '../../../harness/trial/ranks.js';
import type { WorkloadEvent } from '../../../harness/workloads/protocol/events.js';

const step = (rank: number | undefined, samples: number, seconds: number, extra: Record<string, unknown> = {}) =>
  ({
    event: 'step',
    samples,
    seconds,
    data_wait_seconds: seconds / 10,
    ...(rank === undefined ? {} : { rank }),
    ...extra,
  }) as WorkloadEvent;
const memory = (rank: number | undefined, peak: number, extra: Record<string, unknown> = {}) =>
  ({ event: 'memory', peak_bytes: peak, ...(rank === undefined ? {} : { rank }), ...extra }) as WorkloadEvent;

describe('rankOf', () => {
  it('reads the rank field, and takes an event without a usable one for rank 0', () => {
    assert.equal(rankOf(step(3, 1, 1)), 3);
    assert.equal(rankOf(step(undefined, 1, 1)), 0);
    for (const bad of [-1, 1.5, '1', null]) assert.equal(rankOf({ event: 'done', rank: bad }), 0, String(bad));
  });
});

describe('summarizeEvents with N ranks', () => {
  it("takes rank 0's steps and sums the i-th step's samples over every rank that reported one", () => {
    // Interleaved as ranks write them; rank 2 died after its first timed step.
    const events = [
      step(1, 32, 9, { warmup: true }),
      step(0, 32, 0.5, { warmup: true, epoch: 0 }),
      step(2, 32, 9, { warmup: true }),
      step(0, 32, 0.2, { epoch: 0 }),
      step(1, 30, 9),
      step(2, 31, 9),
      step(1, 32, 9),
      step(0, 32, 0.3, { epoch: 1 }),
    ];
    const s = summarizeEvents(events, 3);
    assert.deepEqual(s.warmup, [{ samples: 96, seconds: 0.5, data_wait_seconds: 0.05 }]);
    // Seconds and data waits are rank 0's; the samples are the trial's.
    assert.deepEqual(s.steps, [
      { samples: 32 + 30 + 31, seconds: 0.2, data_wait_seconds: 0.02 },
      { samples: 32 + 32, seconds: 0.3, data_wait_seconds: 0.03 },
    ]);
    assert.equal(s.epochs, 2);
  });

  it('gives no steps when rank 0 reported none, whatever the other ranks did', () => {
    const s = summarizeEvents([step(1, 32, 1), step(1, 32, 1)], 2);
    assert.deepEqual(s.steps, []);
    assert.deepEqual(s.warmup, []);
  });

  it("takes each memory figure as the largest rank's, and names the rank with the largest peak", () => {
    const events = [
      memory(0, 500, { peak_rss_bytes: 500, peak_address_space_bytes: 2000, device: 'cpu' }),
      memory(1, 400, { peak_rss_bytes: 400, peak_address_space_bytes: 2500, device: 'cpu' }),
      memory(1, 700, { peak_rss_bytes: 700, peak_address_space_bytes: 2600, device: 'cpu', pid: 11 }), // its last
    ];
    const s = summarizeEvents(events, 3);
    assert.equal(s.reportedRss, 700);
    assert.equal(s.reportedLimited, 2600);
    assert.equal(s.reportedDevice, null);
    assert.equal(s.peakRank, 1);
    assert.deepEqual(s.rankPeaks, [500, 700, null]);
    assert.deepEqual(s.report, {
      peak_bytes: 700,
      rank: 1,
      peak_rss_bytes: 700,
      peak_address_space_bytes: 2600,
      device: 'cpu',
      pid: 11,
    });
  });

  it('takes the address space and the host RSS each from the rank that had the most of it', () => {
    const s = summarizeEvents(
      [
        memory(0, 100, { peak_rss_bytes: 100, peak_address_space_bytes: 900 }),
        memory(1, 300, { peak_rss_bytes: 300, peak_address_space_bytes: 800 }),
      ],
      2,
    );
    assert.equal(s.reportedRss, 300);
    assert.equal(s.reportedLimited, 900);
    assert.equal(s.peakRank, 1);
  });

  it("takes the device memory on CUDA as the largest rank's, and the host RSS apart from it", () => {
    const s = summarizeEvents(
      [
        memory(0, 6e9, { device: 'cuda', peak_rss_bytes: 2e9 }),
        memory(1, 7e9, { device: 'cuda', peak_rss_bytes: 1e9 }),
      ],
      2,
    );
    assert.equal(s.reportedDevice, 7e9);
    assert.equal(s.reportedRss, 2e9);
    assert.equal(s.peakRank, 1);
  });

  it('reports no memory when no rank did', () => {
    const s = summarizeEvents([step(0, 8, 1), step(1, 8, 1)], 2);
    assert.equal(s.reportedRss, null);
    assert.equal(s.report, undefined);
    assert.equal(s.peakRank, undefined);
  });
});

describe('summarizeEvents with one process', () => {
  it('keeps every step as reported and the last memory event, with no rank fields', () => {
    const events = [
      step(undefined, 8, 1, { warmup: true }),
      step(undefined, 8, 2),
      step(undefined, 6, 3),
      memory(undefined, 10, { peak_rss_bytes: 10 }),
      memory(undefined, 5, { peak_rss_bytes: 5, peak_address_space_bytes: 50 }),
    ];
    const s = summarizeEvents(events, 1);
    assert.deepEqual(
      s.steps.map((x) => x.samples),
      [8, 6],
    );
    assert.equal(s.warmup.length, 1);
    assert.equal(s.reportedRss, 5, 'the last memory event, not the largest');
    assert.equal(s.reportedLimited, 50);
    assert.equal(s.peakRank, undefined);
    assert.equal(s.rankPeaks, undefined);
  });

  it("takes a trial's memory from its steps' memory_bytes when it was stopped before its memory event", () => {
    const step = (memory_bytes: number, device = 'cpu'): WorkloadEvent => ({
      event: 'step',
      samples: 8,
      seconds: 0.1,
      memory_bytes,
      device,
    });
    const cpu = summarizeEvents([step(100), step(300), step(200)], 1);
    assert.equal(cpu.reportedRss, 300);
    assert.equal(cpu.reportedDevice, null);
    assert.equal(cpu.report?.['from_steps'], true);
    const cuda = summarizeEvents([step(500, 'cuda'), step(700, 'cuda')], 1);
    assert.equal(cuda.reportedDevice, 700);
    // A memory event, when there is one, is the workload's own report.
    const both = summarizeEvents([step(500), { event: 'memory', peak_bytes: 900 }], 1);
    assert.equal(both.reportedRss, 900);
    assert.equal(both.report?.['from_steps'], undefined);
  });

  it("takes a stopped trial's capped address space from its steps' address_space_bytes, the largest of them", () => {
    const step = (memory_bytes: number, address_space_bytes?: number): WorkloadEvent => ({
      event: 'step',
      samples: 8,
      seconds: 0.1,
      memory_bytes,
      ...(address_space_bytes === undefined ? {} : { address_space_bytes }),
    });
    // The address space peaks at a step whose RSS is not the largest: each is the largest of its own.
    const s = summarizeEvents([step(100, 1000), step(300, 1500), step(200, 1800), step(250)], 1);
    assert.equal(s.reportedRss, 300);
    assert.equal(s.reportedLimited, 1800);
    assert.equal(summarizeEvents([step(100), step(300)], 1).reportedLimited, null);
    // The workload's memory event, when sent, is its own report.
    const both = summarizeEvents(
      [step(100, 1800), { event: 'memory', peak_bytes: 900, peak_address_space_bytes: 2000 }],
      1,
    );
    assert.equal(both.reportedLimited, 2000);
  });
});
