// Which peak-memory figures compare and claim statistics may use.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measuredPeakMemory, type TrialRecord } from '../../../harness/domain/index.js';

const record = (o: { wall: number; report?: boolean; rss: number | null; device?: number | null }) =>
  ({
    wall_seconds: o.wall,
    peak_rss_bytes: o.rss,
    peak_device_bytes: o.device ?? null,
    telemetry: { interval_ms: 200 },
    ...(o.report ? { workload_report: { peak_bytes: o.rss } } : {}),
  }) as unknown as TrialRecord;

describe('measuredPeakMemory', () => {
  it('drops a sampled-only peak of a process shorter than three telemetry intervals', () => {
    assert.equal(measuredPeakMemory(record({ wall: 0.06, rss: 1e6 })), null);
    assert.equal(measuredPeakMemory(record({ wall: 0.59, rss: 1e6 })), null);
    assert.equal(measuredPeakMemory(record({ wall: 0.6, rss: 1e6 })), 1e6);
  });

  it('keeps what the workload reported, however short, and prefers the device', () => {
    assert.equal(measuredPeakMemory(record({ wall: 0.06, rss: 5e6, report: true })), 5e6);
    assert.equal(measuredPeakMemory(record({ wall: 0.06, rss: 5e6, device: 7e9, report: true })), 7e9);
  });
});
