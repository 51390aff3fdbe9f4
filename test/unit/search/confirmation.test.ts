// The max-batch search with confirmations that run until memory flattens, against an in-memory
// workload whose memory grows with steps: for 15 steps then flat, or forever.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findMaxBatch, type MaxBatchOptions } from '../../../harness/search/max-batch.js';
import { confirmationMeasure, growthNote, growthPhrase } from '../../../harness/search/confirmation.js';
import type { ProbeFn, ProbeResult } from '../../../harness/search/probe.js';
import type { MemoryGrowth } from '../../../harness/domain/index.js';
import { bareResult } from '../../support/synthetic.js';
import { notesText } from '../../support/notes.js';

const MIB = 2 ** 20;
const BASE = 100 * MIB;
const PER_SAMPLE = MIB;
const CAP = 2 ** 30;
const BOUND = 200;
const WINDOW = 10;

const OPTS: MaxBatchOptions = {
  multipleOf: 8,
  start: 8,
  ceiling: 1 << 16,
  capBytes: CAP,
  headroom: 0.1,
  tolerance: 0.05,
  throughputPoints: 0,
  // The user's short setting: a fixed 3-step confirmation would take the short-run max.
  confirmSteps: 3,
};

/**
 * Memory after `step` (0-based): each sample holds 1 MiB, and each of the first `grow` steps adds half
 * a MiB per sample more (grow -1: every step does). A short probe runs 3 steps; a run as long as the
 * confirmation runs until its memory flattens (one window after the last rise) or to the bound.
 */
function workload(grow: number): { run: ProbeFn; calls: { batch: number; role: string; steps?: number }[] } {
  const memory = (batch: number, step: number) =>
    BASE + PER_SAMPLE * batch * (1 + 0.5 * (grow < 0 ? step + 1 : Math.min(step + 1, grow)));
  const calls: { batch: number; role: string; steps?: number }[] = [];
  const run: ProbeFn = async (batch, role, steps) => {
    calls.push({ batch, role, ...(steps !== undefined ? { steps } : {}) });
    const long = steps !== undefined && role !== 'throughput';
    const last = !long ? 2 : grow < 0 ? BOUND - 1 : Math.max(steps - 1, grow + WINDOW);
    const peak = memory(batch, last);
    const ok = peak <= CAP;
    const growth: MemoryGrowth =
      grow < 0
        ? {
            verdict: 'growing',
            bytes_per_step: 0.5 * PER_SAMPLE * batch,
            at_step: last,
            at_bound: true,
            peak_bytes: peak,
            source: 'workload',
          }
        : { verdict: 'plateau', at_step: last, peak_bytes: peak, source: 'workload' };
    return {
      batch,
      ok,
      outcome: ok ? 'ok' : 'oom',
      limitedBytes: ok ? peak : null,
      rssBytes: ok ? peak : null,
      samplesPerSecond: ok ? batch * 100 : null,
      p50Seconds: 0.01,
      p95Seconds: 0.01,
      role,
      ...(long && ok ? { growth } : {}),
    } satisfies ProbeResult;
  };
  return { run, calls };
}

/** The largest multiple of 8 whose memory after `step` fits the cap. */
const maxAt = (grow: number, step: number) => {
  const factor = 1 + 0.5 * (grow < 0 ? step + 1 : Math.min(step + 1, grow));
  return Math.floor((CAP - BASE) / (PER_SAMPLE * factor) / 8) * 8;
};

describe('confirmations until memory flattens', () => {
  it("memory that grows for 15 steps then flattens: the max is the flat memory's, even with confirm_steps 3", async () => {
    const w = workload(15);
    const r = await findMaxBatch(w.run, OPTS);
    const holding = maxAt(15, 30); // 8.5 MiB per sample: 104
    assert.equal(holding, 104);
    assert.equal(maxAt(15, 2), 368, 'the 3-step max is far larger');
    assert.equal(r.max, holding);
    assert.equal(r.smallestFail, holding + 8);
    assert.equal(r.confirmed, true);
    assert.deepEqual(r.memoryGrowth, {
      verdict: 'plateau',
      at_step: 25,
      peak_bytes: BASE + PER_SAMPLE * holding * 8.5,
      source: 'workload',
    });
    assert.match(notesText(r.notes), /passed its probe but failed its confirmation \(oom\)/);
    assert.ok(
      w.calls.some((c) => c.batch === holding && c.steps === 3),
      'the max ran until memory flattened',
    );
  });

  it('memory that never stops growing: the max is reported as still growing, never as one that holds', async () => {
    const w = workload(-1);
    const r = await findMaxBatch(w.run, OPTS);
    assert.equal(r.max, maxAt(-1, BOUND - 1));
    assert.equal(r.confirmed, false);
    assert.equal(r.memoryGrowth?.verdict, 'growing');
    assert.match(
      notesText(r.notes),
      new RegExp(
        `batch ${r.max}: memory still growing \\+${(r.max / 2).toFixed(1)} MiB/step at the bound \\(200 steps\\), ` +
          'so it is not called a max that holds: raise confirm_max_steps',
      ),
    );
    // The max's long run was its confirmation: it is not run again.
    assert.equal(w.calls.filter((c) => c.batch === r.max && c.steps !== undefined).length, 1);
  });

  it('a run without memory per step is not a max that holds', async () => {
    const run: ProbeFn = async (batch, role, steps) => {
      const ok = batch <= 64;
      return {
        ...bareResult(batch, ok ? 'ok' : 'oom', role),
        ...(ok && steps !== undefined
          ? { growth: { verdict: 'unproven' as const, missing: 'memory' as const, steps } }
          : {}),
      };
    };
    const r = await findMaxBatch(run, { ...OPTS, capBytes: null });
    assert.equal(r.max, 64);
    assert.equal(r.confirmed, false);
    assert.match(notesText(r.notes), /batch 64: memory per step not measured in 3 steps.*report memory_bytes/);
  });
});

describe('confirmationMeasure and the verdict in words', () => {
  it('asks for the bound, in epochs as long as a confirm_steps run', () => {
    assert.deepEqual(confirmationMeasure({ warmupSteps: 1, minSteps: 3, maxSteps: 200, epochs: 2 }), {
      warmupSteps: 1,
      steps: 200,
      epochs: 101,
      plateau: { min_steps: 4, window: 10, tolerance: 0.002 },
    });
    // A bound below the minimum is raised to it; one epoch asks for none.
    assert.deepEqual(confirmationMeasure({ warmupSteps: 0, minSteps: 50, maxSteps: 20, epochs: 1 }), {
      warmupSteps: 0,
      steps: 50,
      plateau: { min_steps: 50, window: 10, tolerance: 0.002 },
    });
  });

  it('says "plateau at step N" and "still growing +X/step at the bound"', () => {
    assert.equal(
      growthPhrase({ verdict: 'plateau', at_step: 22, peak_bytes: 1.5 * 2 ** 30, source: 'workload' }),
      'memory plateau at step 23 (peak 1.50 GiB)',
    );
    const growing: MemoryGrowth = {
      verdict: 'growing',
      bytes_per_step: 1.7 * MIB,
      at_step: 199,
      at_bound: true,
      peak_bytes: 2 ** 30,
      source: 'cgroup',
    };
    assert.equal(growthPhrase(growing), 'memory still growing +1.7 MiB/step at the bound (200 steps)');
    assert.equal(growthNote(1248, { verdict: 'plateau', at_step: 3, peak_bytes: 1, source: 'workload' }), undefined);
    assert.match(growthNote(1248, growing)!, /^batch 1248: .* not called a max that holds: raise confirm_max_steps/);
  });

  it("shows the cap's own measure (the cgroup's peak of the tree) beside the workload's reading", () => {
    const plateau = { verdict: 'plateau', at_step: 22, peak_bytes: 1.66 * 2 ** 30, source: 'workload' } as const;
    assert.equal(
      growthPhrase({ ...plateau, cap_peak_bytes: 1788 * MIB }),
      "memory plateau at step 23 (cgroup peak 1.75 GiB; the workload's own reading 1.66 GiB)",
    );
    const growing = {
      verdict: 'growing',
      bytes_per_step: MIB,
      at_step: 9,
      at_bound: false,
      peak_bytes: 1,
      source: 'workload',
    } as const;
    assert.match(growthPhrase({ ...growing, cap_peak_bytes: 2 ** 30 }), /after 10 steps; cgroup peak 1.00 GiB$/);
  });
});
