// The phases of a trial as its record keeps them (eval, checkpoint), where a failed trial failed, and
// the phase event's checks: a workload's events are parsed as the harness reads them from the file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CountedEvents, MAX_KEPT_NOTICES } from '../../../harness/trial/counted-events.js';
import { failedIn, phaseRuns } from '../../../harness/trial/phases.js';
import { MAX_PHASE_RUNS } from '../../../harness/domain/index.js';
import { parseEventLine, type WorkloadEvent } from '../../../harness/workloads/protocol/events.js';

const parse = (lines: string[]): WorkloadEvent[] => lines.map((l) => parseEventLine(l)!);
const step = (epoch: number) => `{"event":"step","samples":8,"seconds":0.01,"epoch":${epoch}}`;
const start = (phase: string, epoch: number, s: number) =>
  `{"event":"phase","at":"start","phase":"${phase}","epoch":${epoch},"step":${s}}`;
const end = (phase: string, epoch: number, s: number, peak = 5e8) =>
  `{"event":"phase","at":"end","phase":"${phase}","epoch":${epoch},"step":${s},"seconds":0.5,"peak_bytes":${peak},"peak_scope":"phase"}`;

describe('phase events', () => {
  it('are parsed with their checks: moment, name, counts, seconds and bytes', () => {
    assert.deepEqual(parseEventLine(start('eval', 1, 20)), {
      event: 'phase',
      at: 'start',
      phase: 'eval',
      epoch: 1,
      step: 20,
    });
    for (const bad of [
      '{"event":"phase","at":"begin","phase":"eval"}',
      '{"event":"phase","at":"start","phase":"Eval"}',
      '{"event":"phase","at":"start","phase":"eval; rm -rf"}',
      `{"event":"phase","at":"start","phase":"${'x'.repeat(33)}"}`,
      '{"event":"phase","at":"start","phase":"eval","epoch":-1}',
      '{"event":"phase","at":"start","phase":"eval","step":1.5}',
      '{"event":"phase","at":"end","phase":"eval","seconds":1e400}',
      '{"event":"phase","at":"end","phase":"eval","seconds":1,"peak_bytes":1e300}',
      '{"event":"phase","at":"end","phase":"eval","seconds":1,"peak_scope":"device"}',
    ])
      assert.equal(parseEventLine(bad), null, bad);
  });

  it("are kept apart from the notices, so a workload's many phases never crowd out its oom", () => {
    const counted = new CountedEvents(1);
    for (let i = 0; i < MAX_KEPT_NOTICES * 2; i++) counted.take(parseEventLine(start('eval', i, i))!);
    counted.take(parseEventLine('{"event":"oom","message":"x","phase":"eval","epoch":3}')!);
    assert.ok(counted.events.some((e) => e.event === 'oom'));
  });
});

describe('phaseRuns', () => {
  it('keeps the phases that ended, in order, with their epoch, time and memory', () => {
    const events = parse([
      step(0),
      start('eval', 0, 1),
      end('eval', 0, 1),
      start('checkpoint', 0, 1),
      end('checkpoint', 0, 1, 6e8),
      step(1),
    ]);
    assert.deepEqual(phaseRuns(events), [
      { phase: 'eval', epoch: 0, seconds: 0.5, peak_bytes: 5e8, peak_scope: 'phase' },
      { phase: 'checkpoint', epoch: 0, seconds: 0.5, peak_bytes: 6e8, peak_scope: 'phase' },
    ]);
  });

  it(`keeps at most ${MAX_PHASE_RUNS}`, () => {
    const lines = Array.from({ length: MAX_PHASE_RUNS + 10 }, (_, i) => end('eval', i, i));
    assert.equal(phaseRuns(parse(lines)).length, MAX_PHASE_RUNS);
  });
});

describe('failedIn', () => {
  it("takes the workload's own failure report first", () => {
    const events = parse([
      step(0),
      start('eval', 0, 1),
      '{"event":"phase","at":"failed","phase":"eval","epoch":0,"step":1,"error":"OutOfMemoryError"}',
      '{"event":"oom","message":"CUDA out of memory","phase":"eval","epoch":0,"step":1}',
    ]);
    assert.deepEqual(failedIn(events, 'oom'), { phase: 'eval', epoch: 0, step: 1, source: 'event' });
    assert.equal(failedIn(events, 'ok'), undefined, 'an ok trial failed nowhere');
  });

  it("reads an oom event's phase fields when no failed phase event came", () => {
    const events = parse(['{"event":"oom","message":"x","phase":"checkpoint","epoch":2,"step":-3}']);
    assert.deepEqual(failedIn(events, 'oom'), { phase: 'checkpoint', epoch: 2, source: 'event' });
  });

  it('places a killed program in the innermost phase it never ended', () => {
    const events = parse([step(0), start('eval', 0, 1), end('eval', 0, 1), start('checkpoint', 0, 1)]);
    assert.deepEqual(failedIn(events, 'oom'), { phase: 'checkpoint', epoch: 0, step: 1, source: 'open-phase' });
  });

  it('places a kill after a train start in train, the phases before it being over', () => {
    const events = parse([start('train', 0, 0), step(0), start('eval', 0, 1), end('eval', 0, 1), start('train', 1, 1)]);
    assert.deepEqual(failedIn(events, 'oom'), { phase: 'train', epoch: 1, step: 1, source: 'open-phase' });
    const inEval = parse([start('train', 0, 0), step(0), start('eval', 0, 1)]);
    assert.deepEqual(failedIn(inEval, 'oom'), { phase: 'eval', epoch: 0, step: 1, source: 'open-phase' });
  });

  it('says train when the program reported phases and none was open, and nothing when it reports none', () => {
    const events = parse([step(0), start('eval', 0, 1), end('eval', 0, 1), step(1), step(1)]);
    assert.deepEqual(failedIn(events, 'oom'), { phase: 'train', epoch: 1, source: 'outside-phases' });
    assert.equal(failedIn(parse([step(0), step(1)]), 'oom'), undefined);
  });
});
