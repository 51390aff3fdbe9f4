// repeat_boundary: the max and the smallest failing batch run again; the band model places the max written
// within max_risk, it passes every one of its runs, and the boundary is reported as a band.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bandRunsOf, countRuns } from '../../../harness/search/band-model.js';
import { lowerInBand, repeatBoundary } from '../../../harness/search/boundary-repeat.js';
import { findMaxBatch } from '../../../harness/search/max-batch.js';
import type { ProbeFn } from '../../../harness/search/probe.js';
import { passFail } from '../../support/synthetic.js';
import { notesText } from '../../support/notes.js';

/** A workload whose batch passes with the scripted outcomes (in call order), then by `limit`. */
function scripted(limit: number, script: Record<number, boolean[]> = {}) {
  const calls: { batch: number; role: string; steps: number | undefined }[] = [];
  const run: ProbeFn = async (batch, role, steps) => {
    calls.push({ batch, role, steps });
    return passFail(batch, script[batch]?.length ? script[batch].shift()! : batch <= limit, role, steps);
  };
  return { run, calls };
}

describe('repeatBoundary', () => {
  it('places the max below a sharp boundary by the band model, and the max written passed every run', async () => {
    // 200 passes every run, 208 fails every run: the band model still cannot rule out a spread of a few
    // samples from 6 runs, so 200 (next to a failure) is above max_risk 2% and 192 is written.
    const w = scripted(200);
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: 50, maxRisk: 0.02 });
    assert.equal(b.lo, 24);
    assert.equal(b.hi, 26);
    const { model, runs, ...band } = b.band;
    assert.deepEqual(runs, [
      { batch: 192, passed: 2, failed: 0 },
      { batch: 200, passed: 3, failed: 0 },
      { batch: 208, passed: 0, failed: 3 },
    ]);
    assert.deepEqual(band, {
      repeats: 2,
      passed_all: 192,
      failed_some: [{ batch: 200, passed: 3, failed: 0 }],
      failed_all: 208,
      steps: 50,
    });
    assert.ok(model && model.risk <= 0.02 && model.max_risk === 0.02, JSON.stringify(model));
    assert.equal(model.runs, 8, 'the placing runs, 2 repeats of each side and 2 runs of 192');
    assert.ok(
      model.limit > 200 && model.limit < 208,
      `the limit lies between the pass and the failure: ${model.limit}`,
    );
    assert.deepEqual(
      w.calls.map((c) => [c.batch, c.role, c.steps]),
      [
        [200, 'repeat', 50],
        [200, 'repeat', 50],
        [208, 'repeat', 50],
        [208, 'repeat', 50],
        [192, 'repeat', 50],
        [192, 'repeat', 50],
      ],
    );
    assert.match(b.log.join('\n'), /band model over 6 runs: limit 20\d \+\/- \d+; 192 fails a run with chance/);
  });

  it('keeps the max when its risk is within max_risk, without further runs', async () => {
    const w = scripted(200);
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: 50, maxRisk: 0.5 });
    assert.equal(b.lo, 25);
    assert.deepEqual(
      w.calls.map((c) => c.batch),
      [200, 200, 208, 208],
    );
    assert.ok(b.band.model!.risk <= 0.5);
  });

  it('moves the max below a band where identical runs differ, further than below a sharp boundary', async () => {
    // 200 passed when the search placed it, then passes 1 of 2 repeats; 208 passes 1 of 3 runs.
    const w = scripted(192, { 200: [true, false], 208: [true, false] });
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: undefined, maxRisk: 0.02 });
    assert.equal(b.lo, 23, 'the wider band costs a wider margin: 184, not 192');
    assert.equal(b.hi, 25, '200 failed a run: it is the smallest failure now');
    const { model, runs, ...band } = b.band;
    assert.equal(
      runs!.reduce((n, r) => n + r.passed + r.failed, 0),
      model!.runs,
      'the runs kept are the fitted ones',
    );
    assert.deepEqual(band, {
      repeats: 2,
      passed_all: 184,
      failed_some: [
        { batch: 200, passed: 2, failed: 1 },
        { batch: 208, passed: 1, failed: 2 },
      ],
      failed_all: null,
      steps: null,
    });
    assert.ok(model!.risk <= 0.02);
    // 184 had not run: it runs `repeats` times, all ok.
    assert.deepEqual(
      w.calls.filter((c) => c.batch === 184).map((c) => c.role),
      ['repeat', 'repeat'],
    );
  });

  it('fits again after a failure at the batch it placed, and lowers the max until one passes every run', async () => {
    const w = scripted(180);
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: 50, maxRisk: 0.02 });
    // 200 fails its first repeat, 208 its two; the model places 184, which fails (above 180); fitted
    // again on that failure it places 176, which passes both runs.
    assert.deepEqual(
      w.calls.map((c) => c.batch),
      [200, 208, 208, 184, 176, 176],
    );
    assert.equal(b.lo, 22);
    assert.equal(b.hi, 23, '184 is the smallest failure');
    assert.equal(b.band.model!.runs, 8);
    assert.ok(b.band.model!.risk <= 0.02);
    assert.equal((b.log.join('\n').match(/band model over/g) ?? []).length, 2);
  });

  it('steps down twice as far after each failure the model did not foresee, and writes only a batch that passed', async () => {
    // 200 passed the run that placed it, yet the limit is 120: every placed batch fails until 64.
    const w = scripted(120, { 200: [false] });
    const b = await repeatBoundary({ run: w.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: 50, maxRisk: 0.02 });
    assert.deepEqual(
      w.calls.map((c) => c.batch),
      [200, 208, 208, 184, 176, 160, 128, 64, 64],
    );
    assert.equal(b.lo, 8);
    assert.equal(b.hi, 16, '128 is the smallest failure');
    // Nothing passes at all: no max is written.
    const none = scripted(16, { 200: [false] });
    const nothing = await repeatBoundary({ run: none.run, m: 8, lo: 25, hi: 26, repeats: 2, steps: 50, maxRisk: 0.02 });
    assert.equal(nothing.lo, 0);
    assert.equal(nothing.band.passed_all, null);
  });

  it('runs in findMaxBatch after the confirmation: the max it reports passed every run, within max_risk', async () => {
    // The search places the max at 200 (a probe and the confirmation pass); its first repeat fails.
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
      maxRisk: 0.02,
    });
    assert.ok(r.max !== null && r.max < 200);
    assert.equal(r.smallestFail, 200);
    assert.equal(r.confirmed, true, 'the max passed its runs at confirmation length');
    assert.equal(r.band?.passed_all, r.max);
    assert.ok(r.band.model!.risk <= 0.02);
    // The confirmation at 200 is one of the model's runs: 1 pass + 1 failure at 200, 3 failures at 208.
    assert.deepEqual(r.band?.failed_some.at(0), { batch: 200, passed: 1, failed: 1 });
    assert.deepEqual(
      w.calls.filter((c) => c.batch === r.max && c.role === 'repeat').map((c) => c.steps),
      [5, 5],
    );
    assert.match(
      notesText(r.notes),
      new RegExp(
        `batch 200 failed a repeat: the max written is ${r.max}, whose chance of failing a run the band model puts at`,
      ),
    );
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

describe('lowerInBand', () => {
  /** A sharp band at 200 measured by the stage: 192 passed 3 runs, 200 passed 3, 208 failed 3. */
  const stageRuns = [
    ...[192, 192, 192, 200, 200, 200].map((batch) => ({ batch, ok: true })),
    ...[208, 208, 208].map((batch) => ({ batch, ok: false })),
  ];
  /** lowerInBand over the stage's runs (multiples of 8, 2 repeats, max_risk 2%, 12 trials at most). */
  const lower = (failed: number, run: (batch: number) => boolean, budget = 12) =>
    lowerInBand({ run: async (b) => run(b), m: 8, failed, known: stageRuns, repeats: 2, maxRisk: 0.02, budget });

  it('places the lowered batch by the model refitted with the later failure, and it passes repeats + 1 runs', async () => {
    // A later stage's config OOMed at 192, which passed every run of the stage: the band is wider than the
    // stage saw, so the model places the batch further down than one multiple, and that batch runs 3 times.
    const ran: number[] = [];
    const low = await lower(192, (b) => (ran.push(b), b <= 184));
    assert.ok(low.batch !== null && low.batch < 192, String(low.batch));
    assert.deepEqual(ran, [low.batch, low.batch, low.batch]);
    assert.equal(low.lowestFail, 192);
    assert.ok(low.risk !== undefined && low.risk <= 0.02, String(low.risk));
    // The same stage runs without the later failure would place it higher: the failure moved the model.
    const without = await lower(208, () => true);
    assert.ok(without.batch! > low.batch, `${without.batch} > ${low.batch}`);
  });

  it('steps down twice as far after each failure of a batch it placed, and gives up within its budget', async () => {
    const ran: number[] = [];
    const low = await lower(192, (b) => (ran.push(b), b <= 120));
    assert.equal(low.batch, ran.at(-1));
    assert.ok(low.batch <= 120);
    assert.deepEqual(ran.slice(-3), [low.batch, low.batch, low.batch], 'the batch written passed 3 runs in a row');
    const failures = ran.filter((b) => b > 120);
    for (let i = 2; i < failures.length; i++)
      assert.ok(failures[i - 1]! - failures[i]! >= 2 * 8, `the step grows: ${failures.join(', ')}`);
    assert.equal(low.lowestFail, Math.min(...failures));
    // Nothing passes: no batch, and no more runs than the budget.
    let n = 0;
    const none = await lower(192, () => (n++, false), 5);
    assert.equal(none.batch, null);
    assert.equal(n, 5);
  });

  it('gives no risk when the failure is one the model cannot explain by the batch size', async () => {
    // The stage's band is at 200; a later trial failed at 96, far below every pass (a worker's own address
    // space, say). The model fitted with it still puts a failure at 96 below max_risk: it is not the batch's.
    const low = await lower(96, () => true);
    assert.equal(low.batch, 88);
    assert.deepEqual(low.unexplained, [96]);
    assert.equal(low.risk, undefined);
    assert.match(low.log.join('\n'), /cannot explain the failure at 96/);
  });

  it('counts runs by batch and back', () => {
    const rows = countRuns(stageRuns);
    assert.deepEqual(rows, [
      { batch: 192, passed: 3, failed: 0 },
      { batch: 200, passed: 3, failed: 0 },
      { batch: 208, passed: 0, failed: 3 },
    ]);
    assert.deepEqual(countRuns(bandRunsOf(rows)), rows);
  });
});
