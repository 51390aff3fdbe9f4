// Max batch per sequence-length bucket against synthetic transformer-like memory (a + b*B*L + c*B*L^2).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findMaxBatchPerBucket } from '../../../harness/search/buckets.js';
import { fitLengthModel, predictBucket } from '../../../harness/search/length-model.js';
import { findMaxBatch, type MaxBatchOptions } from '../../../harness/search/max-batch.js';
import type { ProbeFn } from '../../../harness/search/probe.js';
import {
  BUCKET_LENGTHS,
  BUCKET_SEARCH,
  lengthMemory,
  lengthTrueMax,
  lengthWorkload,
  type LengthCurve,
} from '../../support/synthetic.js';
import { notesText } from '../../support/notes.js';

const GiB = 2 ** 30;
const LENGTHS = BUCKET_LENGTHS;
const BASE: Omit<MaxBatchOptions, 'capBytes'> = { ...BUCKET_SEARCH, placeBy: 'count' };

function curve(noise = 0, seed = 1): LengthCurve {
  // 2 GiB fixed, 64 KiB per token, 24 bytes per batch x length^2: attention dominates past ~2.7k tokens.
  return { a: 2 * GiB, b: 64 * 1024, c: 24, cap: 24 * GiB, noise, seed };
}

describe('findMaxBatchPerBucket', () => {
  for (const noise of [0, 0.01]) {
    it(`finds every bucket's exact max, largest first, with fewer probes than independent searches (noise ${noise})`, async () => {
      const c = curve(noise);
      const w = lengthWorkload(c);
      const r = await findMaxBatchPerBucket(w.runAt, LENGTHS, { ...BASE, capBytes: c.cap });
      assert.deepEqual(
        r.buckets.map((b) => b.value),
        [...LENGTHS].reverse(),
      );
      for (const b of r.buckets) {
        const truth = lengthTrueMax(c, b.value, 8, BASE.ceiling);
        assert.equal(b.result.status, 'exact', `bucket ${b.value}`);
        assert.equal(b.result.max, truth, `bucket ${b.value}`);
        // The answer ran at this bucket, and the next multiple failed at this bucket.
        const at = (batch: number) => w.calls.filter((x) => x.length === b.value && x.batch === batch);
        assert.ok(at(truth!).length > 0, `bucket ${b.value}: its max ran`);
        assert.ok(at(truth! + 8).length > 0, `bucket ${b.value}: max + 8 ran`);
      }
      let independent = 0;
      for (const length of LENGTHS) {
        const solo = lengthWorkload(c);
        const one = await findMaxBatch(solo.runAt(length), { ...BASE, capBytes: c.cap });
        assert.equal(one.max, lengthTrueMax(c, length, 8, BASE.ceiling));
        independent += one.probesToMax;
      }
      assert.ok(
        r.probesToMax < independent * 0.8,
        `bucketed ${r.probesToMax} probes vs independent ${independent}: the neighbours and the model should save a fifth`,
      );
      // The joint model recovers the curve's coefficients from the readings.
      assert.ok(r.model, 'a model across buckets');
      assert.ok(Math.abs(r.model.a - c.a) / c.a < 0.1 + 5 * noise, `a ${r.model.a}`);
      assert.ok(Math.abs(r.model.c - c.c) / c.c < 0.1 + 10 * noise, `c ${r.model.c}`);
    });
  }

  it("runs the neighbour's bound before it reports it, and searches from below when it fails", async () => {
    // Shorter sequences that need more memory (a padded buffer): monotonicity in length is broken.
    const cap = 10_000;
    const mem = (batch: number, length: number) => (length === 64 ? 300 * batch : 100 * batch);
    const calls: { batch: number; length: number }[] = [];
    const runAt =
      (length: number): ProbeFn =>
      async (batch, role) => {
        calls.push({ batch, length });
        const ok = mem(batch, length) <= cap;
        return {
          batch,
          ok,
          outcome: ok ? 'ok' : 'oom',
          limitedBytes: ok ? mem(batch, length) : null,
          rssBytes: null,
          samplesPerSecond: null,
          p50Seconds: null,
          p95Seconds: null,
          role,
        };
      };
    const r = await findMaxBatchPerBucket(runAt, [64, 128], { ...BASE, multipleOf: 1, capBytes: cap });
    const [long, short] = r.buckets;
    assert.equal(long!.result.max, 100);
    assert.equal(short!.result.max, 33, 'exact despite the wrong neighbour bound');
    assert.ok(
      calls.some((x) => x.length === 64 && x.batch === 100),
      'the bound from the longer bucket was run at the shorter one',
    );
    assert.ok(/not monotone in the bucket parameter/.test(notesText(short!.result.notes)));
  });
});

describe('the length model', () => {
  it('fits a + b*B*L + c*B*L^2 and predicts a bucket it has not seen', () => {
    const c = curve();
    const readings = [
      [64, 2048],
      [128, 2048],
      [256, 1024],
      [512, 1024],
    ].map(([batch, length]) => ({ batch: batch!, length: length!, bytes: lengthMemory(c, batch!, length!) }));
    const model = fitLengthModel(readings)!;
    assert.ok(Math.abs(model.a / c.a - 1) < 1e-6 && Math.abs(model.b / c.b - 1) < 1e-6);
    assert.ok(Math.abs(model.c / c.c - 1) < 1e-6);
    const p = predictBucket(readings, 256, c.cap)!;
    const exact = (c.cap - c.a) / (c.b * 256 + c.c * 256 * 256);
    assert.ok(Math.abs(p.batch - exact) < 1e-3, `${p.batch} vs ${exact}`);
    assert.ok(p.spread < 1e-3);
  });

  it('from one length only, brackets the next bucket between linear and quadratic scaling', () => {
    const c = curve();
    const readings = [64, 128, 256].map((batch) => ({ batch, length: 2048, bytes: lengthMemory(c, batch, 2048) }));
    assert.equal(fitLengthModel(readings), undefined, 'one length cannot separate b from c');
    const p = predictBucket(readings, 1024, c.cap)!;
    const truth = (c.cap - c.a) / (c.b * 1024 + c.c * 1024 * 1024);
    assert.ok(p.batch - p.spread <= truth && truth <= p.batch + p.spread, 'the truth lies in the bracket');
  });
});
