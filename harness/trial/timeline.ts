// Where a trial's wall time went, from the harness's clock and the times the workload's events carry:
// the launch, the process's imports and setup, the build before the first step, warm-up, steps, the
// work after the last step, the teardown and the harness's own work after the exit.
import type { TrialTimeline } from '../domain/index.js';
import type { WorkloadEvent } from '../workloads/protocol/events.js';
import type { TrialClock } from './process.js';

const round = (s: number): number => Math.round(s * 1000) / 1000;
/** Seconds from a to b, never negative (two clocks of one machine, read a few ms apart). */
const span = (a: number, b: number): number => round(Math.max(0, b - a));

/** The unix time (s) an event carries as `t`, when it does. */
function timeOf(e: WorkloadEvent): number | undefined {
  const t = (e as { t?: unknown }).t;
  return typeof t === 'number' && Number.isFinite(t) ? t : undefined;
}

/**
 * The trial's timeline. Times the workload reports (`t` on marks, steps and `done`: the Python adapter
 * sends them) place the phases inside the process; without them those phases are null and their time
 * is in `unaccounted`. `harness` is the launch plus the work after the exit: what the harness itself costs.
 */
export function trialTimeline(clock: TrialClock, events: readonly WorkloadEvent[]): TrialTimeline {
  const started = clock.startedMs / 1000;
  const exit = clock.exitMs / 1000;
  const mark = (name: string) => {
    const e = events.find((x) => x.event === 'mark' && x['name'] === name);
    return e ? timeOf(e) : undefined;
  };
  const steps = events.filter((e) => e.event === 'step' && (e['rank'] === undefined || e['rank'] === 0));
  const firstStep = steps[0];
  const lastStep = steps.at(-1);
  const firstEnd = firstStep ? timeOf(firstStep) : undefined;
  const stepStart = firstEnd !== undefined && firstStep ? firstEnd - Number(firstStep['seconds']) : undefined;
  const lastEnd = lastStep ? timeOf(lastStep) : undefined;
  const done = events.find((e) => e.event === 'done');
  const failed = events.find((e) => e.event === 'phase' && e.at === 'failed');
  // A failure ends the work as `done` would: the time until it is the build (no step) or the steps'.
  const doneAt = done ? timeOf(done) : failed ? timeOf(failed) : undefined;
  const begin = mark('start');
  const sum = (warm: boolean) =>
    round(steps.filter((s) => Boolean(s['warmup']) === warm).reduce((a, s) => a + Number(s['seconds']), 0));
  const t: TrialTimeline = {
    launch: span(clock.launchMs / 1000, started),
    setup: begin !== undefined ? span(started, begin) : null,
    build:
      stepStart !== undefined
        ? span(begin ?? started, stepStart)
        : doneAt !== undefined && steps.length === 0
          ? span(begin ?? started, doneAt)
          : null,
    warmup: steps.length > 0 ? sum(true) : null,
    steps: steps.length > 0 ? sum(false) : null,
    finish: lastEnd !== undefined && doneAt !== undefined ? span(lastEnd, doneAt) : null,
    teardown: span(doneAt ?? lastEnd ?? exit, exit),
    after_exit: span(exit, clock.endMs / 1000),
    harness: 0,
    unaccounted: 0,
  };
  t.harness = round(t.launch + t.after_exit);
  const wall = (clock.endMs - clock.launchMs) / 1000;
  const known = [t.launch, t.setup, t.build, t.warmup, t.steps, t.finish, t.teardown, t.after_exit];
  t.unaccounted = span(
    known.reduce<number>((a, b) => a + (b ?? 0), 0),
    wall,
  );
  return t;
}
