// repeat_boundary: the max and the smallest failing batch run again; a max that fails a repeat steps
// down until a batch passes every run, and the boundary is reported as a band.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { repeatBoundary } from '../../../harness/search/boundary-repeat.js';
import { findMaxBatch } from '../../../harness/search/max-batch.js';
import type { ProbeFn, ProbeResult } from '../../../harness/search/probe.js';

/** A workload whose batch passes with the scripted outcomes (in call order), then by `limit`. */
function scripted(limit: number, script: Record<number, boolean[]> = {}) {
  const calls: { batch: number; role: string; steps: number | undefined }[] = [];
  const run: ProbeFn = async (batch, role, steps) => {
    calls.push({ batch, role, steps });
    const ok = script[batch]?.length ? script[batch].shift()! : batch <= limit;
    const r: ProbeResult = {
      batch,
      ok,
      outcome: ok ? 'ok' : 'oom',
      limitedBytes: null,
      rssBytes: null,
      samplesPerSecond: ok ? 1000 : null,
      p50Seconds: null,
      p95Seconds: null,
      role,
      // A run of confirmation length that passed ran until its memory flattened.
      ...(ok && steps !== undefined
        ? { growth: { verdict: 'plateau' as const, at_step: steps, peak_bytes: batch, source: 'workload' as const } }
        : {}),
    };
    return r;
  };
  return { run, calls };
}

describe('repeatBoundary', () => {
  it('keeps a boundary that repeats, and says both sides held: 200 passed 2 more runs, 208 failed 2', async () => {
    const w = scripted(200);
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: 50 });
    assert.equal(b.lo, 25);
    assert.equal(b.hi, 26);
    assert.deepEqual(b.band, { repeats: 2, passed_all: 200, failed_some: [], failed_all: 208, steps: 50 });
    assert.deepEqual(
      w.calls.map((c) => [c.batch, c.role, c.steps]),
      [
        [200, 'repeat', 50],
        [200, 'repeat', 50],
        [208, 'repeat', 50],
        [208, 'repeat', 50],
      ],
    );
  });

  it('steps a max that fails a repeat down to one that passes every run, and reports the band', async () => {
    // 200 passed when the search placed it, then fails its second repeat; 208 passes 1 of 3 runs.
    const w = scripted(192, { 200: [true, false], 208: [true, false] });
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: undefined });
    assert.equal(b.lo, 24, 'the max written passed every run');
    assert.equal(b.hi, 25, '200 failed a run: it is the smallest failure now');
    assert.deepEqual(b.band, {
      repeats: 2,
      passed_all: 192,
      failed_some: [
        { batch: 200, passed: 2, failed: 1 },
        { batch: 208, passed: 1, failed: 2 },
      ],
      failed_all: null,
      steps: null,
    });
    // 192 had not run: it runs 3 times (a first run and 2 repeats), all ok.
    assert.deepEqual(
      w.calls.filter((c) => c.batch === 192).map((c) => c.role),
      ['repeat', 'repeat', 'repeat'],
    );
  });

  it('steps down 1, 2, 4 multiples while each fails, then bisects the gap to the failure', async () => {
    const w = scripted(160, { 200: [false] });
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 1, steps: undefined });
    // 200 fails; 192 (-1) fails; 176 (-2) fails; 144 (-4) passes twice; then 160 passes twice and 168
    // fails: the max written is next to a batch that failed.
    assert.equal(b.lo, 20);
    assert.deepEqual(
      w.calls.map((c) => c.batch),
      [200, 192, 176, 144, 144, 160, 160, 168, 208],
    );
    assert.equal(b.band.passed_all, 160);
    // 200 passed the run that placed it: 168 to 200 are inside the band, 208 is where it ends.
    assert.deepEqual(b.band.failed_some, [
      { batch: 168, passed: 0, failed: 1 },
      { batch: 176, passed: 0, failed: 1 },
      { batch: 192, passed: 0, failed: 1 },
      { batch: 200, passed: 1, failed: 1 },
    ]);
    assert.equal(b.band.failed_all, 208);
  });

  it('runs in findMaxBatch after the confirmation: the max it reports passed every repeat', async () => {
    // The search places the max at 200 (one pass); repeated, 200 fails once, so 192 is written.
    const w = scripted(200, { 200: [true, true, false] });
    const r = await findMaxBatch(w.run, {
      multipleOf: 8,
      start: 8,
      ceiling: 1024,
      capBytes: null,
      headroom: 0.1,
      tolerance: 0.05,
      throughputPoints: 0,
      confirmSteps: 5,
      placeBy: 'count',
      repeatBoundary: 2,
    });
    assert.equal(r.max, 192);
    assert.equal(r.smallestFail, 200);
    assert.equal(r.confirmed, true, '192 passed its repeats at confirmation length');
    assert.equal(r.band?.passed_all, 192);
    // 200's confirmation is the run the band counts as placing it; its first repeat failed.
    assert.deepEqual(r.band?.failed_some, [{ batch: 200, passed: 1, failed: 1 }]);
    assert.deepEqual(
      w.calls.filter((c) => c.batch === 192 && c.role === 'repeat').map((c) => c.steps),
      [5, 5, 5],
    );
    assert.match(r.notes.join('\n'), /batch 200 failed one of 2 repeats: the max written is 192/);
  });

  it('is off by default in the search', async () => {
    const w = scripted(200);
    const r = await findMaxBatch(w.run, {
      multipleOf: 8,
      start: 8,
      ceiling: 1024,
      capBytes: null,
      headroom: 0.1,
      tolerance: 0.05,
      throughputPoints: 0,
      confirmSteps: 0,
      placeBy: 'count',
    });
    assert.equal(r.band, undefined);
    assert.equal(w.calls.filter((c) => c.role === 'repeat').length, 0);
  });
});
