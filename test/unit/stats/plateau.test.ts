// Plateau detection on exact memory series: flat, growing linearly, growing 15 steps then flat, noisy
// flat, and the epoch boundary and minimum the window must wait for.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundaryStep, judgeGrowth, plateauStep, type MemoryPoint } from '../../../harness/stats/plateau.js';
import type { PlateauRule } from '../../../harness/domain/index.js';

const MIB = 2 ** 20;
const GIB = 2 ** 30;
const RULE: PlateauRule = { min_steps: 4, window: 10, tolerance: 0.002 };

const series = (n: number, bytes: (step: number) => number, epoch?: (step: number) => number): MemoryPoint[] =>
  Array.from({ length: n }, (_, step) => ({ step, bytes: bytes(step), ...(epoch ? { epoch: epoch(step) } : {}) }));
const run = (steps: number, bound = 200) => ({ steps, bound, source: 'workload' as const });

describe('plateauStep and judgeGrowth', () => {
  it('flat: a plateau one window after the first update', () => {
    const s = series(30, () => GIB);
    // The window's reference reading is step 1 (after the first update), so the window ends at step 11.
    assert.equal(plateauStep(s, RULE), 11);
    assert.deepEqual(judgeGrowth(s, RULE, run(30)), {
      verdict: 'plateau',
      at_step: 11,
      peak_bytes: GIB,
      source: 'workload',
    });
  });

  it('growing linearly: still growing at the bound, at exactly its rate', () => {
    const s = series(200, (i) => GIB + 2 * MIB * i);
    assert.equal(plateauStep(s, RULE), undefined);
    assert.deepEqual(judgeGrowth(s, RULE, run(200)), {
      verdict: 'growing',
      bytes_per_step: 2 * MIB,
      at_step: 199,
      at_bound: true,
      peak_bytes: GIB + 398 * MIB,
      source: 'workload',
    });
    // A run that stopped by itself before its bound is growing, but not at the bound.
    const g = judgeGrowth(
      series(50, (i) => GIB + 2 * MIB * i),
      RULE,
      run(50),
    );
    assert.equal(g.verdict === 'growing' && g.at_bound, false);
  });

  it('growing for 15 steps, then flat: the plateau is one window after the last new peak', () => {
    const s = series(60, (i) => GIB + 8 * MIB * Math.min(i, 15));
    // Step 15 is the last rise; its window ends at step 25.
    assert.equal(plateauStep(s, RULE), 25);
    const g = judgeGrowth(s, RULE, run(60));
    assert.deepEqual(g, { verdict: 'plateau', at_step: 25, peak_bytes: GIB + 120 * MIB, source: 'workload' });
  });

  it('noisy flat: rises below the tolerance are no new peaks', () => {
    // A deterministic +-600 KiB wobble around 1 GiB.
    const s = series(40, (i) => GIB + (((i * 7919) % 13) - 6) * 100 * 1024);
    assert.equal(plateauStep(s, RULE), 11);
    // The same wobble around 20 GiB with 20 MiB jumps stays under 0.2% of the peak (41 MiB) too.
    assert.equal(
      plateauStep(
        series(40, (i) => 20 * GIB + (i % 2) * 20 * MIB),
        RULE,
      ),
      11,
    );
  });

  it('slow growth above the tolerance is growth: 0.5 MiB per step on 1 GiB', () => {
    const s = series(100, (i) => GIB + 0.5 * MIB * i);
    // 5 MiB per window of 10 is more than 0.2% of 1 GiB (2.05 MiB).
    assert.equal(plateauStep(s, RULE), undefined);
    const g = judgeGrowth(s, RULE, run(100, 100));
    assert.equal(g.verdict, 'growing');
    assert.equal(g.verdict === 'growing' && g.bytes_per_step, 0.5 * MIB);
  });

  it('waits for the first epoch boundary, and sees memory the boundary leaves behind', () => {
    const epoch = (i: number) => (i < 20 ? 0 : 1);
    assert.equal(boundaryStep(series(30, () => GIB, epoch)), 20);
    assert.equal(
      plateauStep(
        series(40, () => GIB, epoch),
        RULE,
      ),
      30,
    );
    // 50 MiB left behind in the boundary's second step: the window starts after it.
    const left = series(45, (i) => GIB + (i >= 21 ? 50 * MIB : 0), epoch);
    assert.equal(plateauStep(left, RULE), 31);
    // Epochs reported, none crossed: not a plateau, and said why.
    const one = series(
      40,
      () => GIB,
      () => 0,
    );
    assert.equal(boundaryStep(one), null);
    assert.deepEqual(judgeGrowth(one, RULE, run(40)), { verdict: 'unproven', missing: 'epoch-boundary', steps: 40 });
  });

  it('runs at least min_steps, and says what is missing when it cannot judge', () => {
    assert.equal(
      plateauStep(
        series(60, () => GIB),
        { ...RULE, min_steps: 50 },
      ),
      49,
    );
    assert.deepEqual(
      judgeGrowth(
        series(8, () => GIB),
        RULE,
        run(8),
      ),
      {
        verdict: 'unproven',
        missing: 'window',
        steps: 8,
      },
    );
    assert.deepEqual(judgeGrowth([], RULE, { steps: 30, bound: 30, source: null }), {
      verdict: 'unproven',
      missing: 'memory',
      steps: 30,
    });
  });

  it('counts readings, not steps, when readings are sparse (harness readings)', () => {
    // One reading every third step, flat: the window is ten readings.
    const sparse = series(60, () => GIB).filter((p) => p.step % 3 === 0);
    assert.equal(plateauStep(sparse, RULE), 33);
  });
});
