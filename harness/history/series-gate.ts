// The nightly gate of `tunebench history` on the series of one experiment in one environment
// (stats/nightly.ts): every key metric's nights replayed in order, the acknowledged runs (pinned or
// accepted) starting new levels, confirmed nights entering with their re-measured value, and the
// latest night tested twice: as measured (the alarm) and, when a confirmation exists, as re-measured.
// Pure: the same runs, acknowledgements and confirmations give the same verdicts.
import { NIGHTLY_DEFAULTS, NightlyGate, type NightStatus } from '../stats/nightly.js';
import type { RunEntry } from './index.js';
import { z } from 'zod';

/** Above any throughput (samples/s) or speed-up a machine measures: a larger value was not measured. */
export const MAX_CONFIRMED_VALUE = 1e15;

const finite = z.number().finite();
/** An absolute path on one line: where a confirmation ran (checked to lie in the reports tree when read). */
const runDirSchema = z
  .string()
  .refine((p) => p.startsWith('/') && !/[\u0000-\u001f\u007f]/.test(p), 'expected an absolute path on one line');

/** A re-measurement of one flagged metric of one run (stored in <reports>/<experiment>/confirmations.json). */
export const confirmationSchema = z
  .object({
    run_id: z.string(),
    metric: z.string(),
    /** When it ran. */
    at: z.string(),
    /** The re-measured value (the metric's own estimator over more trials); null when it could not be measured. */
    value: finite.positive().max(MAX_CONFIRMED_VALUE).nullable(),
    /** Trials whose value went into `value`. */
    trials: z.number().int().nonnegative(),
    /** The run whose config was measured beside tonight's, interleaved. */
    reference_run: z.string(),
    same_config: z.boolean(),
    /** Tonight's config over the reference run's config, both measured now (95% CI), when the configs differ. */
    config_ratio: z
      .object({ estimate: finite.positive(), low: finite.nonnegative(), high: finite.positive() })
      .nullable(),
    /** The confirmation's own run directory. */
    run_dir: runDirSchema.nullable(),
    /** Why it could not measure, when it could not. */
    error: z.string().nullable(),
  })
  .superRefine((c, ctx) => {
    // A value is the estimate of trials that ran in a run directory: without them it was not measured.
    if (c.value !== null && c.trials < 1)
      ctx.addIssue({
        code: 'custom',
        path: ['trials'],
        message: `a measured value needs at least 1 trial, got ${c.trials}`,
      });
    if (c.value !== null && c.run_dir === null)
      ctx.addIssue({
        code: 'custom',
        path: ['run_dir'],
        message: 'a measured value needs the run directory it was measured in',
      });
  });
export type Confirmation = z.infer<typeof confirmationSchema>;

export interface GateTest {
  /** Estimated ratio of the last k nights to the reference level, and the one-sided p of a change. */
  ratio: number;
  p: number;
  k: number;
  reference_nights: number;
  reference_from: string | null;
  reference_to: string | null;
  /** Night-to-night spread (sd of ln value) and lag-1 autocorrelation estimated from the history. */
  spread: number;
  rho: number;
}

export interface GatedMetric {
  name: string;
  unit: string;
  /** The latest night's status after its confirmation (if any). */
  status: NightStatus;
  direction: 'regression' | 'improvement' | null;
  /** The latest night as measured, before any confirmation. */
  alarm: GateTest | null;
  alarm_direction: 'regression' | 'improvement' | null;
  /** The latest night's test on the value the gate kept (the confirmation's, when there is one). */
  test: GateTest | null;
  confirmation: Confirmation | null;
  /** A regression alarm waiting for its confirmation run. */
  pending: boolean;
  /** A regression that fails the gate: flagged, beyond the threshold, confirmed (or confirmation off or failed). */
  failing: boolean;
  /** Nights flagged and not yet part of the reference (run ids), the latest included. */
  held: string[];
  /** Level changes: nights that became the reference by persisting or by acknowledgement. */
  changes: {
    run_id: string;
    how: 'persisted' | 'acknowledged';
    ratio: number;
    direction: 'regression' | 'improvement';
  }[];
}

export interface SeriesGate {
  env_key: string;
  nights: number;
  /** The latest night had too short a history for any metric to be tested. */
  warm_up: boolean;
  /**
   * Finished nights in one environment before the gate tests (the reference needs minReference
   * nights before the look-back).
   */
  nights_needed: number;
  /** Alarm budget of this experiment tonight, and the per-test alpha it came to. */
  alpha: number;
  per_test_alpha: number | null;
  min_drop: number;
  confirm: boolean;
  acknowledged: string[];
  metrics: GatedMetric[];
}

export interface SeriesGateOptions {
  alpha: number;
  /** A regression counts only beyond this fraction (the --fail-on-regression threshold). */
  minDrop: number;
  /** Runs that start a new level: the pinned baseline and the runs accepted with `tunebench baseline accept`. */
  acknowledged: ReadonlySet<string>;
  confirmations: readonly Confirmation[];
  /** Whether a regression alarm waits for a confirmation (false: --no-confirm, or no threshold). */
  confirm: boolean;
}

/** Nights of one environment the gate needs before it tests the latest one. */
export const NIGHTS_NEEDED = NIGHTLY_DEFAULTS.minReference + NIGHTLY_DEFAULTS.looks.at(-1)!;

/**
 * Only metrics where higher is better and that vary continuously: the max batch is a config,
 * checked by --fail-on-config-change.
 */
export function gatedMetricNames(run: RunEntry): { name: string; unit: string }[] {
  return run.metrics.filter((m) => m.unit !== 'samples').map((m) => ({ name: m.name, unit: m.unit }));
}

/** The gate of the latest of `runs` (one environment, oldest first). */
export function seriesGate(runs: readonly RunEntry[], o: SeriesGateOptions): SeriesGate {
  const latest = runs.at(-1)!;
  const metrics = gatedMetricNames(latest);
  const confirmed = new Map(
    o.confirmations.filter((c) => c.value !== null).map((c) => [`${c.run_id}\u0000${c.metric}`, c]),
  );
  const confirmationOf = (run: string, metric: string) =>
    o.confirmations.filter((c) => c.run_id === run && c.metric === metric).at(-1) ?? null;
  const measured = (i: number) => metrics.map((m) => runs[i]!.metrics.find((p) => p.name === m.name)?.value ?? null);
  const kept = (i: number) =>
    measured(i).map((v, m) => confirmed.get(`${runs[i]!.run_id}\u0000${metrics[m]!.name}`)?.value ?? v);
  const gate = new NightlyGate(metrics.length, { alpha: o.alpha, minDrop: o.minDrop });
  const last = runs.length - 1;
  for (let i = 0; i < last; i++) gate.commit(gate.evaluate(kept(i)), o.acknowledged.has(runs[i]!.run_id));
  const alarm = gate.evaluate(measured(last));
  const final = gate.evaluate(kept(last));
  gate.commit(final, o.acknowledged.has(latest.run_id));
  const asTest = (t: (typeof alarm.tests)[number], flag: 'regression' | 'improvement' | null): GateTest | null =>
    t
      ? {
          ratio: t.ratio,
          p: flag === 'improvement' ? t.pUpper : flag === 'regression' ? t.pLower : Math.min(t.pLower, t.pUpper),
          k: t.k,
          reference_nights: t.reference.length,
          reference_from: runs[t.reference[0]!]?.run_id ?? null,
          reference_to: runs[t.reference.at(-1)!]?.run_id ?? null,
          spread: t.spread,
          rho: t.rho,
        }
      : null;
  const gated = metrics.map((m, j): GatedMetric => {
    const replay = gate.replays[j]!;
    const night = replay.nights[last]!;
    const confirmation = confirmationOf(latest.run_id, m.name);
    const alarmFlag = alarm.flags[j] ?? null;
    const regression = night.direction === 'regression' && (night.status === 'flagged' || night.status === 'persisted');
    const pending = o.confirm && alarmFlag === 'regression' && confirmation === null;
    return {
      name: m.name,
      unit: m.unit,
      status: night.status,
      direction: night.direction,
      alarm: asTest(alarm.tests[j], alarmFlag),
      alarm_direction: alarmFlag,
      test: asTest(final.tests[j], night.direction),
      confirmation,
      pending,
      // A confirmation that could not measure leaves the alarm standing: a gate never passes for lack of evidence.
      failing: !pending && (regression || (confirmation?.value === null && alarmFlag === 'regression')),
      held: gate.held(j).map((i) => runs[i]!.run_id),
      changes: replay.changes.map((c) => ({
        run_id: runs[c.index]!.run_id,
        how: c.how,
        ratio: c.ratio,
        direction: c.direction,
      })),
    };
  });
  return {
    env_key: latest.env_key,
    nights: runs.length,
    warm_up: alarm.tests.every((t) => !t),
    nights_needed: NIGHTS_NEEDED,
    alpha: o.alpha,
    per_test_alpha: final.alpha,
    min_drop: o.minDrop,
    confirm: o.confirm,
    acknowledged: runs.filter((r) => o.acknowledged.has(r.run_id)).map((r) => r.run_id),
    metrics: gated,
  };
}
