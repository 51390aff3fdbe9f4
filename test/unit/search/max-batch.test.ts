// The max-batch search against deterministic in-memory workloads with known memory curves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findMaxBatch, type MaxBatchOptions } from '../../../harness/search/max-batch.js';
import type { ProbeFn } from '../../../harness/search/probe.js';
import { bareResult, capFor, growingRun, syntheticWorkload, trueMax, type CurveSpec } from '../../support/synthetic.js';
import { notesText } from '../../support/notes.js';

const BASE: Omit<MaxBatchOptions, 'capBytes'> = {
  multipleOf: 8,
  start: 8,
  ceiling: 1 << 21,
  headroom: 0.1,
  tolerance: 0.05,
  throughputPoints: 0,
  confirmSteps: 0,
};

function curve(shape: CurveSpec['shape'], max: number, noise = 0, seed = 1, base = 800 * 2 ** 20): CurveSpec {
  const partial = { shape, base, perSample: 2048, noise, seed, chunk: (2048 * max) / 16 };
  return { ...partial, cap: capFor(partial, max) };
}

async function search(c: CurveSpec, opts: Partial<MaxBatchOptions> = {}) {
  const w = syntheticWorkload(c);
  const result = await findMaxBatch(w.run, { ...BASE, capBytes: c.cap, ...opts });
  return { result, calls: w.calls, truth: trueMax(c, opts.multipleOf ?? 8, opts.ceiling ?? BASE.ceiling) };
}

/** Checks the invariants every answer must satisfy: max ran ok, max + m ran and failed. */
function assertExact(r: Awaited<ReturnType<typeof search>>, m = 8): void {
  assert.equal(r.result.status, 'exact');
  assert.equal(r.result.max, r.truth);
  const at = (b: number) => r.calls.filter((c) => c.batch === b);
  assert.ok(at(r.truth!).length > 0, 'the max itself was run');
  assert.ok(at(r.truth! + m).length > 0, 'max + multiple_of was run');
  assert.equal(r.result.smallestFail, r.truth! + m);
}

describe('findMaxBatch', () => {
  it('is exact on a linear curve in a handful of probes', async () => {
    const r = await search(curve('linear', 100_000));
    assertExact(r);
    assert.ok(r.result.probesToMax <= 8, `took ${r.result.probesToMax} probes`);
  });

  for (const shape of ['quadratic', 'sublinear', 'staircase'] as const) {
    it(`is exact on a ${shape} curve`, async () => {
      for (const max of [16, 1000, 37_000, 600_000]) assertExact(await search(curve(shape, max)));
    });
  }

  it('stays exact with noisy memory readings (1% Gaussian, several seeds)', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      for (const max of [200, 9000, 250_000]) assertExact(await search(curve('linear', max, 0.01, seed)));
    }
  });

  it('strategy power-bisect: doubles from start until a failure, then bisects, and its answer is exact too', async () => {
    for (const max of [16, 1000, 37_000]) {
      const c = curve('linear', max);
      const r = await search(c, { strategy: 'power-bisect', start: 64 });
      assertExact(r);
      const probes = r.calls.map((x) => x.batch);
      // The first probes double from start until the first failure: Lightning's power phase, not the memory line.
      const firstFail = probes.findIndex((b) => b > r.truth!);
      assert.deepEqual(
        probes.slice(0, firstFail + 1),
        probes.slice(0, firstFail + 1).map((_, i) => 64 * 2 ** i),
      );
      assert.ok(
        r.result.log.every((l) => !l.startsWith('explore')),
        r.result.log.join('\n'),
      );
      // tunebench's own search, on the same curve, reaches the same exact max.
      const own = await search(c, { start: 64 });
      assert.equal(own.result.max, r.result.max);
    }
  });

  it('strategy shrink-on-oom: x0.9 from start until a batch runs (Accelerate), then bisected to exact', async () => {
    for (const max of [16, 1000, 37_000]) {
      const c = curve('linear', max);
      const r = await search(c, { strategy: 'shrink-on-oom', start: 65_536 });
      assertExact(r);
      const probes = r.calls.map((x) => x.batch);
      // Accelerate's phase: every probe up to the first that fits is 0.9x the one before, on multiples of 8.
      const firstOk = probes.findIndex((b) => b <= r.truth!);
      assert.ok(firstOk > 0);
      assert.deepEqual(
        probes.slice(0, firstOk + 1),
        probes.slice(0, firstOk + 1).map((_, i) => (i === 0 ? 65_536 : Math.floor((probes[i - 1]! * 0.9) / 8) * 8)),
      );
      assert.ok(r.result.log.every((l) => !l.startsWith('explore')));
      const own = await search(c, { start: 64 });
      assert.equal(own.result.max, r.result.max);
    }
  });

  for (const strategy of ['shrink-on-oom', 'power-bisect'] as const)
    it(`strategy ${strategy} stops at a failure that is not an OOM, as its library raises it: the workload is broken`, async () => {
      const calls: number[] = [];
      const result = await findMaxBatch(
        async (batch, role) => {
          calls.push(batch);
          return bareResult(batch, 'crash', role);
        },
        { ...BASE, capBytes: 1 << 30, strategy, start: 1024 },
      );
      assert.deepEqual(calls, [1024]);
      assert.equal(result.status, 'failed');
      assert.ok(result.notes.some((n) => n.kind === 'workload-broken' && n.batch === 1024 && n.outcome === 'crash'));
    });

  it('finds a max below the first probe by bisecting down', async () => {
    const r = await search(curve('linear', 100), { start: 4096 });
    assertExact(r);
    assert.equal(r.calls[0]!.batch, 4096);
  });

  it('reports none-fits when even multiple_of fails, never an untested value', async () => {
    const r = await search(curve('linear', 5));
    assert.equal(r.result.status, 'none-fits');
    assert.equal(r.result.max, null);
    assert.equal(r.result.smallestFail, 8);
  });

  it('reports a max above the ceiling as the ceiling, flagged', async () => {
    const r = await search(curve('linear', 5_000_000), { ceiling: 65_536 });
    assert.equal(r.result.status, 'ceiling');
    assert.equal(r.result.max, 65_536);
    assert.equal(r.result.smallestFail, null);
    assert.ok(
      r.calls.some((c) => c.batch === 65_536 && c.role === 'probe'),
      'the ceiling itself ran',
    );
    assert.ok(
      r.calls.every((c) => c.batch <= 65_536),
      'nothing above the ceiling was probed',
    );
    assert.match(notesText(r.result.notes), /at least 65536/);
  });

  it('falls back to doubling then bisection without memory readings', async () => {
    const c = curve('linear', 3000);
    const w = syntheticWorkload(c);
    const blind: ProbeFn = async (b, role, steps) => ({
      ...(await w.run(b, role, steps)),
      limitedBytes: null,
      rssBytes: null,
    });
    const result = await findMaxBatch(blind, { ...BASE, capBytes: c.cap });
    assert.equal(result.max, trueMax(c, 8, BASE.ceiling));
    const probes = w.calls.map((x) => x.batch);
    assert.deepEqual(probes.slice(0, 5), [8, 16, 32, 64, 128], 'doubles from the start');
  });

  it('only ever returns batch sizes that ran, for every reported answer', async () => {
    const c = curve('quadratic', 20_000);
    const r = await search(c, { throughputPoints: 3, confirmSteps: 10, latency: { quantile: 'p95', seconds: 0.2 } });
    const ran = new Set(r.calls.filter((x) => x.batch > 0).map((x) => x.batch));
    for (const v of [r.result.max, r.result.recommended, r.result.fastest, r.result.latencyBound?.batch]) {
      assert.ok(v !== null && v !== undefined && ran.has(v), `answer ${v} was run`);
    }
    assert.ok(
      r.calls.some((x) => x.role === 'confirm' && x.batch === r.result.max),
      'the max was confirmed',
    );
    assert.equal(r.result.confirmed, true);
  });

  it('recommends a smaller batch that keeps the resident-memory headroom', async () => {
    // A base small enough that 20% headroom is reachable: 20 MiB fixed, 100 MB at the max.
    const c = curve('linear', 50_000, 0, 1, 20 * 2 ** 20);
    const r = await search(c, { headroom: 0.2 });
    const mem = (b: number) => c.base + c.perSample * b;
    assert.ok(r.result.recommended !== null && r.result.recommended < r.result.max!);
    assert.ok(mem(r.result.recommended) <= 0.8 * mem(r.result.max!), 'headroom kept');
    assert.ok(mem(r.result.recommended + 8 * 40) > 0.8 * mem(r.result.max!), 'and not far below the target');
  });

  it('recommends nothing when the fixed memory alone breaks the headroom', async () => {
    // 800 MiB fixed and 4 MB per 2000 samples: 10% headroom is below the fixed part.
    const r = await search(curve('linear', 2000), { headroom: 0.1 });
    assert.equal(r.result.recommended, null);
    assert.match(notesText(r.result.notes), /no tested batch kept the requested headroom/);
  });

  it('reports fastest separately from max: throughput saturates', async () => {
    // Synthetic throughput is batch / (0.002 + batch / 50000): within 5% of peak from about batch 2000.
    const r = await search(curve('linear', 200_000), { throughputPoints: 6 });
    assert.ok(r.result.fastest! < r.result.max!);
    assert.match(notesText(r.result.notes), /buys memory pressure, not speed/);
  });

  it('reports the largest batch within a latency limit, bracketed by a violating one', async () => {
    // Synthetic p95 step latency is 1.1 * (0.002 + batch / 50000): 50 ms at batch 2172.
    const r = await search(curve('linear', 200_000), {
      throughputPoints: 4,
      latency: { quantile: 'p95', seconds: 0.05 },
    });
    const bound = r.result.latencyBound!;
    assert.ok(bound.batch! <= 2172 && bound.batch! > 1000, `bound ${bound.batch}`);
    assert.ok(bound.firstViolating! > 2172);
  });

  it('continues with long probes when the max fails its confirmation', async () => {
    // Memory grows with steps: a batch needs 0.1% more per extra step beyond 3.
    const c = curve('linear', 10_000);
    const { run, calls } = growingRun(
      c.cap,
      (batch, steps) => (c.base + c.perSample * batch) * (1 + 0.001 * Math.max(0, (steps ?? 3) - 3)),
    );
    const result = await findMaxBatch(run, { ...BASE, capBytes: c.cap, confirmSteps: 10 });
    const longMax = Math.floor((c.cap / 1.007 - c.base) / c.perSample / 8) * 8;
    assert.ok(longMax > 1000 && longMax < 10_000);
    assert.equal(result.max, longMax);
    assert.equal(result.confirmed, true);
    assert.match(notesText(result.notes), /memory grows with steps/);
    assert.ok(
      calls.some((x) => x.batch === longMax + 8 && x.steps === 10),
      'max + 8 failed a long run',
    );
    assert.ok(
      calls.some((x) => x.batch === longMax && x.steps === 10),
      'max passed a long run',
    );
  });

  it('places long probes by the growth a failed confirmation showed: a few runs, not a walk down', async () => {
    // Long runs need 30% more of the batch-dependent memory (an eval batch, optimizer state): the
    // short-run max is far above the long-run one.
    const c = curve('linear', 10_000);
    const { run, calls } = growingRun(
      c.cap,
      (batch, steps) => c.base + c.perSample * batch * (steps === undefined ? 1 : 1.3),
    );
    const result = await findMaxBatch(run, { ...BASE, capBytes: c.cap, confirmSteps: 10 });
    const longMax = Math.floor((c.cap - c.base) / (c.perSample * 1.3) / 8) * 8;
    assert.equal(result.max, longMax);
    assert.equal(result.confirmed, true);
    assert.ok(calls.some((x) => x.batch === longMax + 8 && x.steps === 10 && x.role !== 'throughput'));
    // The failed confirmation, one step down that passes, then the pair the two lines predict.
    const long = calls.filter((x) => x.steps === 10);
    assert.ok(long.length <= 5, `${long.length} long runs: ${long.map((x) => x.batch).join(' ')}`);
  });

  it('stops at once when the workload is broken at the first probe', async () => {
    const run: ProbeFn = async (batch, role) => ({ ...bareResult(batch, 'crash', role), reason: 'exit code 1' });
    const result = await findMaxBatch(run, { ...BASE, capBytes: 1e9 });
    assert.equal(result.status, 'failed');
    assert.equal(result.probes.length, 1);
    assert.match(notesText(result.notes), /fix it before tuning/);
  });

  it("without a cap, another card's prediction guides the search: exact, in one pair when it is right", async () => {
    const c = curve('linear', 5000);
    const truth = trueMax(c, 8, BASE.ceiling)!;
    const right = await search(c, { capBytes: null, predict: () => ({ batch: truth, spread: 0 }) });
    assertExact(right);
    assert.equal(right.result.probesToMax, 3, right.result.log.join('\n'));
    for (const off of [0.6, 1.3]) {
      const wrong = await search(c, { capBytes: null, predict: () => ({ batch: Math.round(truth * off), spread: 0 }) });
      assertExact(wrong);
    }
  });

  it('beats power-of-two-then-bisect on large maxima (median over shapes)', async () => {
    const { powerThenBisect } = await import('../../../harness/search/reference.js');
    const ratios: number[] = [];
    for (const shape of ['linear', 'quadratic', 'sublinear'] as const) {
      for (const max of [50_000, 300_000, 900_000]) {
        const c = curve(shape, max);
        const ours = await search(c);
        const ref = await powerThenBisect(syntheticWorkload(c).run, { init: 2, multipleOf: 8, ceiling: BASE.ceiling });
        assert.equal(ref.max, ours.truth);
        ratios.push(ours.result.probesToMax / ref.probes);
      }
    }
    ratios.sort((a, b) => a - b);
    assert.ok(ratios[4]! <= 0.5, `median ratio ${ratios[4]}`);
  });
});
