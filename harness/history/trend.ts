// History analysis: per experiment and environment, one series per key metric with its change points,
// the chosen values over time, and the gate of the latest run against its baseline (pinned with
// `tunebench baseline set`, else the run before it in the same environment).
import { dirname } from 'node:path';
import { ConfigError } from '../errors.js';
import {
  compareRuns,
  environmentDiffs,
  regressions,
  type BeforeAfter,
  type MetricComparison,
} from '../analysis/compare-runs.js';
import { detectChangePoints } from '../stats/change-points.js';
import type { RunEntry } from './index.js';
import { seriesGate, type SeriesGate } from './series-gate.js';
import { tiedBy } from './config-change.js';
import { readNights, type Night } from './nights.js';
import { confirmationRoots, readAccepted, readBaseline, readConfirmations } from './files.js';
import type { ParamValue } from '../domain/index.js';
import { readRunDir } from '../experiment/run-file.js';

export {
  ACCEPTED_FILE,
  appendConfirmations,
  BASELINE_FILE,
  confirmationRoots,
  CONFIRMATIONS_FILE,
  readAccepted,
  readBaseline,
  readConfirmations,
  writeAccepted,
  writeBaseline,
  type AcceptedRun,
  type BaselinePin,
} from './files.js';

export interface TrendPoint {
  run_id: string;
  started_at: string;
  value: number;
  low: number | null;
  high: number | null;
}

export interface MarkedChange {
  /** Index into the series; the run that starts the new level. */
  index: number;
  run_id: string;
  started_at: string;
  before: number;
  after: number;
  ratio: number;
  kind: 'regression' | 'improvement';
}

export interface MetricTrend {
  name: string;
  unit: string;
  env_key: string;
  points: TrendPoint[];
  changes: MarkedChange[];
}

export interface ChosenTrend {
  param: string;
  env_key: string;
  points: { run_id: string; started_at: string; value: ParamValue }[];
  /** Runs whose chosen value differs from the run before. */
  changes: { run_id: string; started_at: string; before: ParamValue; after: ParamValue }[];
}

export interface Gate {
  latest: { run_id: string; dir: string; env_key: string };
  baseline: { run_id: string; dir: string; env_key: string; pinned: boolean } | null;
  /** Set when the baseline ran in another environment and --allow-env-mismatch let the comparison go ahead. */
  env_mismatch: string[] | null;
  comparison: BeforeAfter | null;
  /** Metrics significantly slower than the baseline beyond the threshold (all significant slowdowns without one). */
  regressions: MetricComparison[];
  config_changes: { param: string; before: ParamValue | null; after: ParamValue | null }[];
  /** Chosen values that changed between configs tied tonight: not a change (no exit 4), and why. */
  config_ties: { param: string; before: ParamValue | null; after: ParamValue | null; why: string }[];
  /**
   * The series gate on the latest run's environment (null when it cannot run); it decides exit 3
   * unless it is warming up.
   */
  series: SeriesGate | null;
  notes: string[];
}

export interface ExperimentHistory {
  experiment: string;
  runs: number;
  environments: { env_key: string; env_label: string; runs: number }[];
  metrics: MetricTrend[];
  chosen: ChosenTrend[];
  gate: Gate | null;
  /** The nights the paired gate judged (nights.json), oldest first: flagged, accepted and the rest. */
  nights: Night[];
  /** Each run's git commit (null when it recorded none), by run id: the chart's ticks and tooltips. */
  commits: Record<string, string | null>;
}

export interface HistoryOptions {
  /** Regression threshold in percent for the gate; 0 lists every significant slowdown. */
  failPct: number;
  noiseBand: number;
  allowEnvMismatch: boolean;
  /** Alarm budget per night for every experiment analyzed together (split equally between them). */
  alarmBudget: number;
  /** Regression alarms wait for a confirmation run (the CLI runs it and analyzes again). */
  confirm: boolean;
  /** Where the history reports and confirmation runs go (--out); default <reports>/history. */
  outRoot?: string;
}

function series(runs: readonly RunEntry[]): MetricTrend[] {
  const byName = new Map<string, MetricTrend>();
  for (const run of runs) {
    for (const m of run.metrics) {
      const key = `${run.env_key}\u0000${m.name}`;
      const t = byName.get(key) ?? { name: m.name, unit: m.unit, env_key: run.env_key, points: [], changes: [] };
      t.points.push({ run_id: run.run_id, started_at: run.started_at, value: m.value, low: m.low, high: m.high });
      byName.set(key, t);
    }
  }
  for (const t of byName.values()) {
    const fit = detectChangePoints(t.points);
    t.changes = fit.changePoints.map((c) => ({
      index: c.index,
      run_id: t.points[c.index]!.run_id,
      started_at: t.points[c.index]!.started_at,
      before: c.before,
      after: c.after,
      ratio: c.ratio,
      kind: c.ratio < 1 ? 'regression' : 'improvement',
    }));
  }
  return [...byName.values()];
}

function chosenSeries(runs: readonly RunEntry[]): ChosenTrend[] {
  const byParam = new Map<string, ChosenTrend>();
  for (const run of runs) {
    for (const [param, value] of Object.entries(run.chosen)) {
      const key = `${run.env_key}\u0000${param}`;
      const t = byParam.get(key) ?? { param, env_key: run.env_key, points: [], changes: [] };
      const last = t.points.at(-1);
      if (last && last.value !== value)
        t.changes.push({ run_id: run.run_id, started_at: run.started_at, before: last.value, after: value });
      t.points.push({ run_id: run.run_id, started_at: run.started_at, value });
      byParam.set(key, t);
    }
  }
  return [...byParam.values()];
}

/** The latest run against its baseline: significant slowdowns and chosen-config changes. */
function gate(runs: readonly RunEntry[], opts: HistoryOptions, alpha: number): Gate | null {
  const latest = runs.at(-1);
  if (!latest) return null;
  const notes: string[] = [];
  const pin = readBaseline(dirname(latest.dir));
  let baseline: Gate['baseline'] = null;
  if (pin && pin.run_id !== latest.run_id) {
    const pinned = runs.find((r) => r.run_id === pin.run_id);
    if (!pinned)
      notes.push(`the pinned baseline ${pin.run_id} is not among the finished runs; using the previous run instead`);
    else baseline = { run_id: pinned.run_id, dir: pinned.dir, env_key: pinned.env_key, pinned: true };
  }
  if (!baseline) {
    const previous = runs
      .slice(0, -1)
      .reverse()
      .find((r) => r.env_key === latest.env_key);
    if (previous) baseline = { run_id: previous.run_id, dir: previous.dir, env_key: previous.env_key, pinned: false };
    else notes.push('no baseline: this is the first finished run in its environment');
  }
  const expDir = dirname(latest.dir);
  const nightly = seriesGate(
    runs.filter((r) => r.env_key === latest.env_key),
    {
      alpha,
      minDrop: opts.failPct / 100,
      acknowledged: new Set([...readAccepted(expDir).map((a) => a.run_id), ...(pin ? [pin.run_id] : [])]),
      confirmations: readConfirmations(expDir, confirmationRoots(expDir, opts.outRoot)),
      confirm: opts.confirm,
    },
  );
  const out: Gate = {
    latest: { run_id: latest.run_id, dir: latest.dir, env_key: latest.env_key },
    baseline,
    env_mismatch: null,
    comparison: null,
    regressions: [],
    config_changes: [],
    config_ties: [],
    series: nightly,
    notes,
  };
  if (!baseline) return out;
  const before = readRunDir(baseline.dir);
  const after = readRunDir(latest.dir);
  if (baseline.env_key !== latest.env_key) {
    // The environment key leaves the host, kernel and memory out: those do not make another environment.
    const diffs = environmentDiffs(before.run.environment, after.run.environment)
      .filter((d) => d.field !== 'host' && d.field !== 'kernel' && d.field !== 'memory')
      .map((d) => d.text);
    if (!opts.allowEnvMismatch) {
      throw new ConfigError(
        `refusing to compare ${latest.experiment} run ${latest.run_id} with baseline ${baseline.run_id}: ` +
          `they ran in different environments (${diffs.join('; ') || 'fingerprints differ'}). ` +
          'Pin a baseline from this environment (tunebench baseline set <run-dir>), ' +
          'or compare anyway with --allow-env-mismatch',
      );
    }
    out.env_mismatch = diffs;
  }
  out.comparison = compareRuns(before, after, { noiseBand: opts.noiseBand });
  out.regressions = regressions(out.comparison, opts.failPct);
  // A value that flipped between configs tied within the noise band tonight is not a change (exit 4 is for
  // changes the night decided): it is kept as a tie, with why.
  const stages = after.run.result?.stages ?? [];
  for (const { param, before: b, after: a } of out.comparison.chosen.filter((c) => c.changed)) {
    const tie = tiedBy({ param, before: b, after: a }, stages);
    if (tie === null) out.config_changes.push({ param, before: b, after: a });
    else out.config_ties.push({ param, before: b, after: a, why: tie });
  }
  return out;
}

/** Whether the series gate decides the latest night (else, while it warms up, the latest run against its baseline). */
export function seriesDecides(g: Gate | null): boolean {
  return g?.series !== null && g?.series !== undefined && !g.series.warm_up;
}

/** The metrics that fail the gate tonight (exit 3 under --fail-on-regression): names only. */
export function failingMetrics(g: Gate | null): string[] {
  if (!g) return [];
  return seriesDecides(g)
    ? g.series!.metrics.filter((m) => m.failing).map((m) => m.name)
    : g.regressions.map((r) => r.metric);
}

/** The history of each experiment in the index (or only the named one). */
export function analyzeHistory(
  runs: readonly RunEntry[],
  opts: HistoryOptions & { experiment?: string },
): ExperimentHistory[] {
  const names = [...new Set(runs.map((r) => r.experiment))].sort();
  if (opts.experiment !== undefined && !names.includes(opts.experiment)) {
    throw new ConfigError(
      `no finished run of experiment ${JSON.stringify(opts.experiment)}; ` +
        `experiments with runs: ${names.map((n) => JSON.stringify(n)).join(', ') || 'none'}`,
    );
  }
  const chosen = names.filter((n) => opts.experiment === undefined || n === opts.experiment);
  // One budget for the night: every experiment checked together shares it.
  const alpha = opts.alarmBudget / Math.max(1, chosen.length);
  return chosen.map((name) => {
    const mine = runs.filter((r) => r.experiment === name);
    const envs = new Map<string, { env_key: string; env_label: string; runs: number }>();
    for (const r of mine) {
      const e = envs.get(r.env_key) ?? { env_key: r.env_key, env_label: r.env_label, runs: 0 };
      e.runs += 1;
      envs.set(r.env_key, e);
    }
    return {
      experiment: name,
      runs: mine.length,
      environments: [...envs.values()],
      metrics: series(mine),
      chosen: chosenSeries(mine),
      gate: gate(mine, opts, alpha),
      nights: mine.length > 0 ? readNights(dirname(mine[0]!.dir)) : [],
      commits: Object.fromEntries(mine.map((r) => [r.run_id, r.git_commit])),
    };
  });
}
