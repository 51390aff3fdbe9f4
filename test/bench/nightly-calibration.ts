// Calibration of the nightly gates on simulated histories (test/support/night-sim.ts), through the
// shipped code: the previous gate (the latest run against the run before, Welch on the
// trials: welchRatioInterval, direction, regressions), the step detector (detectChangePoints), a plain
// t test of the last night against the 12 before it (as Mozilla's Perfherder does), and the new
// series gate (NightlyGate) with its confirmation.
import type { BeforeAfter, MetricComparison } from '../../harness/analysis/compare-runs.js';
import { regressions } from '../../harness/analysis/compare-runs.js';
import { detectChangePoints } from '../../harness/stats/change-points.js';
import { welchRatioInterval } from '../../harness/stats/log-ratio.js';
import { NightlyGate, type NightlyOptions } from '../../harness/stats/nightly.js';
import { tCdf } from '../../harness/stats/student-t.js';
import { direction, speedVerdict } from '../../harness/stats/verdict.js';
import { geomean, HistorySim, type HistorySpec, type NightTrials } from '../support/night-sim.js';

export const METRICS = 4;
export const TRIALS = 5;
export const TRIAL_NOISE = 0.03;
/** The confirmation re-runs each flagged metric with twice the trials. */
export const CONFIRM_TRIALS = 2 * TRIALS;
export const HORIZON = 20;

/** The previous gate on one night: the metrics called slower, and those beyond the 5% threshold. */
function oldGate(prev: NightTrials, now: NightTrials): { slower: number; exit5: boolean } {
  const metrics = now.map((trials, m) => {
    const ratio = welchRatioInterval(prev[m]!, trials, 0.05);
    return {
      metric: `m${m}`,
      throughput_ratio: ratio,
      verdict: speedVerdict(direction(ratio, 0.02)),
    } as unknown as MetricComparison;
  });
  const cmp = { metrics } as unknown as BeforeAfter;
  return { slower: metrics.filter((m) => m.verdict === 'slower').length, exit5: regressions(cmp, 5).length > 0 };
}

/** Perfherder-like: the last night's value against the 12 before it, one-sided p < 0.05, per metric. */
function plainT(history: readonly number[], x: number): boolean {
  const w = history.slice(-12).map(Math.log);
  if (w.length < 12) return false;
  const mean = w.reduce((a, b) => a + b, 0) / w.length;
  const sd = Math.sqrt(w.reduce((a, b) => a + (b - mean) ** 2, 0) / (w.length - 1));
  const t = (Math.log(x) - mean) / (sd * Math.sqrt(1 + 1 / w.length));
  return tCdf(t, w.length - 1) < 0.05;
}

export interface SeriesOutcome {
  /** Nights each strategy tested, and on how many it alarmed (exit 3 for the gates). */
  nights: { old: number; plain: number; gate: number };
  oldSlowerMetricNights: number;
  oldExit: number;
  plainExit: number;
  /** The new gate: alarms before confirmation, exits after it (redrawn night) and with the night's effect kept. */
  gateAlarm: number;
  gateExit: number;
  gateExitPersistent: number;
  /** Nights from the step to the first exit 3 (1 = the step's own night); null when not within HORIZON. */
  delay: { old: number | null; plain: number | null; gate: number | null; detector: number | null };
}

/**
 * One simulated history through every strategy. The new gate is run twice over the same nights:
 * once where the confirmation re-draws the night (the figure the target is about) and once where
 * the night's effect persists through the confirmation (the pessimistic case).
 */
export function runSeries(
  spec: HistorySpec,
  seed: number,
  opts: Partial<NightlyOptions>,
  detector: boolean,
): SeriesOutcome {
  const sim = new HistorySim(spec, seed);
  const redraw = new NightlyGate(spec.metrics, opts);
  const keep = new NightlyGate(spec.metrics, opts);
  const values: number[][] = Array.from({ length: spec.metrics }, () => []);
  const out: SeriesOutcome = {
    nights: { old: 0, plain: 0, gate: 0 },
    oldSlowerMetricNights: 0,
    oldExit: 0,
    plainExit: 0,
    gateAlarm: 0,
    gateExit: 0,
    gateExitPersistent: 0,
    delay: { old: null, plain: null, gate: null, detector: null },
  };
  const at = spec.step?.at ?? Infinity;
  const stepNight = (i: number) => (i >= at && i - at < HORIZON ? i - at + 1 : null);
  let prev: NightTrials | null = null;
  for (let i = 0; i < spec.nights; i++) {
    const night = sim.nextNight();
    const v = night.map(geomean);
    const since = stepNight(i);
    if (prev) {
      out.nights.old += 1;
      const g = oldGate(prev, night);
      out.oldSlowerMetricNights += g.slower;
      if (g.exit5) {
        out.oldExit += 1;
        if (since !== null && out.delay.old === null) out.delay.old = since;
      }
    }
    if (values[0]!.length >= 12) {
      out.nights.plain += 1;
      if (v.some((x, m) => plainT(values[m]!, x))) {
        out.plainExit += 1;
        if (since !== null && out.delay.plain === null) out.delay.plain = since;
      }
    }
    for (const [gate, persistent] of [
      [redraw, false],
      [keep, true],
    ] as const) {
      let ev = gate.evaluate(v);
      const tested = ev.tests.some((t) => t);
      if (!persistent && tested) out.nights.gate += 1;
      if (ev.flags.includes('regression')) {
        if (!persistent) out.gateAlarm += 1;
        const confirmed = v.map((x, m) =>
          ev.flags[m] === 'regression' ? geomean(sim.remeasure(m, CONFIRM_TRIALS, !persistent)) : x,
        );
        ev = gate.evaluate(confirmed);
        if (ev.flags.includes('regression')) {
          if (persistent) out.gateExitPersistent += 1;
          else {
            out.gateExit += 1;
            if (since !== null && out.delay.gate === null) out.delay.gate = since;
          }
        }
      }
      gate.commit(ev);
    }
    v.forEach((x, m) => values[m]!.push(x));
    if (detector && since !== null && out.delay.detector === null) {
      // The step detector sees the step when a fit of the nights so far marks a regression at the step (+/- 1 night).
      const seen = values.some((series) =>
        detectChangePoints(series.map((value) => ({ value }))).changePoints.some(
          (c) => c.ratio < 1 && Math.abs(c.index - at) <= 1,
        ),
      );
      if (seen) out.delay.detector = since;
    }
    prev = night;
  }
  return out;
}
