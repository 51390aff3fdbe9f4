// The in-process bracket's pure transitions, and the fresh search that starts from its hint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  emptyBracket,
  nextAttempt,
  withAttempt,
  type Bracket,
  type BracketOptions,
} from '../../../harness/search/bracket.js';
import { findMaxBatch } from '../../../harness/search/max-batch.js';
import { growingRun } from '../../support/synthetic.js';

const M = 8;
/** The recorded H200 line (peak device bytes at 64 and 128), the card's memory, and a limit between 3368 and 3376. */
const line = (b: number) => 3160892928 + ((6047622656 - 3160892928) / 64) * (b - 64);
const LIMIT = (line(3368) + line(3376)) / 2;
const CARD = LIMIT * 1.012;

/** Runs the bracket to its end against a memory curve; returns it and the batches it tried. */
function bracketOn(memory: (b: number) => number, o: Partial<BracketOptions> = {}, limit = LIMIT) {
  const opts: BracketOptions = { multipleOf: M, start: 64, ceiling: 1 << 20, capBytes: CARD, maxAttempts: 32, ...o };
  let b: Bracket = emptyBracket;
  const tried: number[] = [];
  for (let next = nextAttempt(b, opts); next; next = nextAttempt(b, opts)) {
    const batch = next.k * M;
    tried.push(batch);
    const need = memory(batch);
    b = withAttempt(b, {
      k: next.k,
      outcome: need <= limit ? 'ok' : 'oom',
      bytes: need <= limit ? need : null,
      why: next.why,
    });
  }
  return { b, tried };
}

describe('in-process bracket', () => {
  it('closes on the H200 line within one multiple, placing by the card memory after two readings', () => {
    const { b, tried } = bracketOn(line);
    assert.ok(line(b.lo * M) <= LIMIT && line((b.lo + 1) * M) > LIMIT, `closed at ${b.lo * M}/${b.hi! * M}`);
    assert.equal(b.hi, b.lo + 1);
    assert.deepEqual(tried.slice(0, 2), [64, 128]);
    // The third attempt is placed by the line, not by doubling (256).
    assert.ok(tried[2]! > 3000, `third attempt ${tried[2]}`);
    // The line overshoots by the card's 1.2% that the workload cannot use; the back-off finds the max below.
    assert.ok(tried.length <= 7, `${tried.length} attempts: ${tried.join(', ')}`);
  });

  it('closes on a curve that bends upward, where the line overestimates the max by 18%', () => {
    const at = (LIMIT / 1.18 - line(0)) / ((line(128) - line(64)) / 64);
    const bend = (b: number) => line(b) * (1 + 0.18 * (b / at) ** 2);
    const { b, tried } = bracketOn(bend);
    assert.ok(bend(b.lo * M) <= LIMIT && bend((b.lo + 1) * M) > LIMIT, `closed at ${b.lo * M}`);
    assert.equal(b.hi, b.lo + 1);
    assert.ok(tried.length <= 14, `${tried.length} attempts: ${tried.join(', ')}`);
  });

  it('doubles without a cap, and halves below a first failure', () => {
    const { b, tried } = bracketOn(line, { capBytes: null });
    assert.deepEqual(tried.slice(0, 4), [64, 128, 256, 512]);
    assert.equal(b.hi, b.lo + 1);
    const low = bracketOn((x) => (x >= 24 ? Infinity : 1), { start: 64 });
    assert.deepEqual(low.tried, [64, 32, 16, 24]);
    assert.equal(low.b.lo * M, 16);
  });

  it('drops a failure that a larger pass contradicts (the process state, not the batch), and stops at a crash', () => {
    let b = withAttempt(emptyBracket, { k: 10, outcome: 'oom', bytes: null, why: 'start' });
    b = withAttempt(b, { k: 12, outcome: 'ok', bytes: 1, why: 'double' });
    assert.equal(b.lo, 12);
    assert.equal(b.hi, null);
    b = withAttempt(b, { k: 20, outcome: 'crash', bytes: null, why: 'double' });
    assert.equal(b.broken, true);
    assert.equal(
      nextAttempt(b, { multipleOf: 8, start: 8, ceiling: 1 << 20, capBytes: null, maxAttempts: 9 }),
      undefined,
    );
  });
});

/** A fresh-process workload over a memory curve (the same at every length of run); records every run. */
const freshRun = (memory: (b: number) => number, limit = LIMIT) => growingRun(limit, (b) => memory(b));

const OPTS = {
  multipleOf: M,
  start: 64,
  ceiling: 1 << 20,
  capBytes: CARD,
  headroom: 0.1,
  tolerance: 0.05,
  throughputPoints: 0,
  confirmSteps: 2,
  skipRecommended: true,
} as const;

describe('the fresh search from an in-process hint', () => {
  it('confirms the bound first and fails the next multiple: two fresh runs when the hint is right', async () => {
    const w = freshRun(line);
    const r = await findMaxBatch(w.run, { ...OPTS, hint: { lo: 3368, hi: 3376, readings: [] } });
    assert.deepEqual(
      w.calls.map((c) => `${c.role} ${c.batch}`),
      ['confirm 3368', 'probe 3376'],
    );
    assert.equal(r.max, 3368);
    assert.equal(r.smallestFail, 3376);
    assert.equal(r.confirmed, true);
  });

  it('goes on below when the bound fails fresh (an in-process pass is only a lower bound there)', async () => {
    const w = freshRun(line, line(3300));
    const r = await findMaxBatch(w.run, { ...OPTS, hint: { lo: 3368, hi: 3376, readings: [] } });
    assert.equal(w.calls[0]!.role, 'confirm');
    assert.equal(r.status, 'exact');
    assert.ok(line(r.max!) <= line(3300) && line(r.smallestFail!) > line(3300), `${r.max}/${r.smallestFail}`);
    assert.equal(r.confirmed, true);
  });

  it('goes on above when the hinted failure passes fresh (an in-process OOM is only a hint)', async () => {
    const w = freshRun(line);
    const r = await findMaxBatch(w.run, { ...OPTS, hint: { lo: 3000, hi: 3008, readings: [] } });
    assert.equal(r.max, 3368);
    assert.equal(r.smallestFail, 3376);
    assert.equal(r.confirmed, true);
    assert.ok(w.calls.some((c) => c.role === 'confirm' && c.batch === 3368));
  });
});
