// A `tunebench time` run against a saved baseline: each command's runs today against its stored runs.
// The two sets were not interleaved (they ran at different times), so the comparison is unpaired:
// Welch's interval of the ratio on the log scale, as `tunebench compare` uses for two runs
// (stats/log-ratio.ts), with the verdict of the noise band that compare stages use.
import { median } from 'simple-statistics';
import { MIN_TRIALS_FOR_CI, welchRatioInterval } from '../stats/log-ratio.js';
import { direction } from '../stats/verdict.js';
import type { TimeBaseline } from '../store/time-baseline.js';
import type { Fingerprint, LogInterval } from '../domain/index.js';
import { environmentDiffs, type EnvironmentDifference } from './compare-runs.js';
import type { TimeSummary } from './time-summary.js';

/** A ratio's CI must lie outside 1 +/- this to count as a change, inside it to count as none (a compare stage's default). */
export const BASELINE_NOISE_BAND = 0.02;

export type BaselineVerdict = 'faster' | 'slower' | 'no significant difference' | 'undecided';

export interface BaselineRow {
  label: string;
  /** Runs that exited 0: stored in the baseline, and today. */
  runs: { baseline: number; today: number };
  /** Median seconds of a run. */
  median: { baseline: number; today: number } | null;
  /**
   * Speed-up today against the baseline (baseline time / today's, > 1 is faster): the ratio of the
   * geometric means with Welch's 95% interval on the log scale; null below MIN_TRIALS_FOR_CI runs a side.
   */
  speedup: LogInterval | null;
  verdict: BaselineVerdict;
}

export interface BaselineComparison {
  baseline: { name: string; saved_at: string; run_id: string; command_line: string };
  noise_band: number;
  /** Always true: the stored runs and today's were not interleaved. */
  unpaired: true;
  rows: BaselineRow[];
  /** Today's commands that the baseline does not hold (labels must match exactly), and the reverse. */
  not_in_baseline: string[];
  not_run_today: string[];
  /** What differs between the baseline's environment and today's (host, CPU, GPU, kernel, versions). */
  environment: EnvironmentDifference[];
}

const okSeconds = (times: TimeSummary['commands'][number]['times']) =>
  times.map((t) => t.seconds).filter((s): s is number => s !== null && s > 0);

/** What `--save-baseline` stores: the successful runs' seconds of each command, and the fingerprint. */
export function baselineOf(
  summary: TimeSummary,
  run: { name: string; command_line: string; run_id: string; environment: Fingerprint; saved_at: string },
): TimeBaseline {
  return {
    tunebench_time_baseline: 1,
    name: run.name,
    saved_at: run.saved_at,
    command_line: run.command_line,
    run_dir: summary.run_dir,
    run_id: run.run_id,
    environment: run.environment,
    commands: summary.commands.map((c) => ({ label: c.label, timing: c.timing, times: okSeconds(c.times) })),
  };
}

/** faster / slower beyond the band, no significant difference inside it, else undecided (or too few runs). */
export function baselineVerdict(speedup: LogInterval | null, band: number): BaselineVerdict {
  if (!speedup) return 'undecided';
  const d = direction(speedup, band);
  if (d === 'higher') return 'faster';
  if (d === 'lower') return 'slower';
  return speedup.low >= 1 - band && speedup.high <= 1 + band ? 'no significant difference' : 'undecided';
}

/** Today's run (its summary and fingerprint) against the saved baseline. */
export function compareWithBaseline(
  baseline: TimeBaseline,
  today: TimeSummary,
  environment: Fingerprint,
  band = BASELINE_NOISE_BAND,
): BaselineComparison {
  const stored = new Map(baseline.commands.map((c) => [c.label, c]));
  const rows: BaselineRow[] = [];
  const notInBaseline: string[] = [];
  for (const c of today.commands) {
    const before = stored.get(c.label);
    if (!before) {
      notInBaseline.push(c.label);
      continue;
    }
    const after = okSeconds(c.times);
    // Runs a second, so the ratio today / baseline is a speed-up, as `tunebench time` reports them.
    const speedup = welchRatioInterval(
      before.times.map((s) => 1 / s),
      after.map((s) => 1 / s),
      0.05,
    );
    rows.push({
      label: c.label,
      runs: { baseline: before.times.length, today: after.length },
      median:
        before.times.length > 0 && after.length > 0 ? { baseline: median(before.times), today: median(after) } : null,
      speedup,
      verdict: baselineVerdict(speedup, band),
    });
  }
  const ran = new Set(today.commands.map((c) => c.label));
  return {
    baseline: {
      name: baseline.name,
      saved_at: baseline.saved_at,
      run_id: baseline.run_id,
      command_line: baseline.command_line,
    },
    noise_band: band,
    unpaired: true,
    rows,
    not_in_baseline: notInBaseline,
    not_run_today: baseline.commands.map((c) => c.label).filter((l) => !ran.has(l)),
    environment: environmentDiffs(baseline.environment, environment),
  };
}

/** Why a row has no verdict, when it has none for lack of runs. */
export function tooFewRuns(row: BaselineRow): boolean {
  return row.runs.baseline < MIN_TRIALS_FOR_CI || row.runs.today < MIN_TRIALS_FOR_CI;
}
