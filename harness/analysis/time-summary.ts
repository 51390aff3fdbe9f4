// What `tunebench time` prints: per command, the median wall time (and samples/s where the program
// speaks the protocol) with a distribution-free 95% CI, and the verdict the stage reached: each
// command against the first (compare statistics), or which scanned values are tied with the best.
import { mean, median, sampleStandardDeviation } from 'simple-statistics';
import { medianInterval } from '../stats/summary.js';
import { cheaper } from '../search/rank.js';
import { detectable, fmtBand, fmtChange, fmtRatio, undecidedCi } from './undecided.js';
import type { CompareArmRow, Config, Interval, Outcome, TrialRecord } from '../domain/index.js';
import { runSeconds } from '../domain/index.js';
import { fillValues, scanConfigs, type TimeRequest } from '../experiment/one-liner.js';
import type { RunResult } from '../experiment/run-file.js';

export type TimeMode = 'single' | 'compare' | 'scan';

export interface TimedCommand {
  /** The command line (or " #2" for the same command again), or the scanned values "workers=2". */
  label: string;
  config: Config;
  /** Timed runs that exited 0 (warm-ups excluded). */
  runs: number;
  /** No timed run of it exited 0: `tunebench time` then exits 2 (compare and single mode). */
  failed_every_run: boolean;
  failures: Partial<Record<Outcome, number>>;
  /** "process": the program sent no step events, so each run is its whole-process time. */
  timing: 'process' | 'steps';
  /**
   * Median seconds per run, with a distribution-free CI (null below 6 runs); min and max; mean and
   * standard deviation (hyperfine's figures). A run's time is its process's window, exec to exit.
   */
  wall: { median: number; ci: Interval | null; min: number; max: number; mean: number; stddev: number | null } | null;
  /** Mean user and system CPU seconds per timed run that exited 0 (null: not measured, e.g. a fork). */
  user: number | null;
  system: number | null;
  /** Every timed run in the order it ran: its seconds (null: it never ran to an exit) and exit code. */
  times: { seconds: number | null; exit_code: number | null; outcome: Outcome }[];
  /** Programs that send step events: median samples/s over runs, with its CI. */
  samples_per_second: { median: number; ci: Interval | null } | null;
  /**
   * compare: baseline / faster / slower / no significant difference / undecided / failed (this command
   * failed at every run) / not compared (the first command failed at every run), against the first;
   * scan: best / tied with the best / slower / failed; single: measured.
   */
  verdict: string;
  /** compare: speed-up against the first (its time / this time, or samples/s ratio), sequential 95% CI. */
  speedup: CompareArmRow['throughput_ratio'];
  /** How the verdict was reached, in words. */
  why: string;
}

export interface TimeSummary {
  mode: TimeMode;
  run_dir: string;
  commands: TimedCommand[];
  /** One sentence per finding, for the terminal and the Markdown export. */
  findings: string[];
}

/** The mean of the values that were measured; null when none was (every run a fork, or none recorded). */
function meanOf(values: readonly (number | undefined)[]): number | null {
  const v = values.filter((x): x is number => x !== undefined);
  return v.length === values.length && v.length > 0 ? mean(v) : null;
}

const timed = (r: TrialRecord) => r.role.kind !== 'warm-up';

function measured(label: string, config: Config, all: readonly TrialRecord[]): Omit<TimedCommand, 'verdict' | 'why'> {
  const runs = all.filter(timed);
  const ok = runs.filter((r) => r.outcome === 'ok');
  const failures: Partial<Record<Outcome, number>> = {};
  for (const r of runs) if (r.outcome !== 'ok') failures[r.outcome] = (failures[r.outcome] ?? 0) + 1;
  const walls = ok.map(runSeconds);
  const wallCi = medianInterval(walls);
  const stepTimed = ok.some((r) => r.timing !== 'process');
  const rates = ok.map((r) => r.samples_per_second).filter((v): v is number => v !== null && v > 0);
  const rateCi = medianInterval(rates);
  return {
    label,
    config,
    runs: ok.length,
    failed_every_run: ok.length === 0,
    failures,
    timing: stepTimed ? 'steps' : 'process',
    wall:
      walls.length === 0
        ? null
        : {
            median: median(walls),
            ci: wallCi,
            min: Math.min(...walls),
            max: Math.max(...walls),
            mean: mean(walls),
            stddev: walls.length > 1 ? sampleStandardDeviation(walls) : null,
          },
    user: meanOf(ok.map((r) => r.user_seconds)),
    system: meanOf(ok.map((r) => r.system_seconds)),
    times: [...runs]
      .sort((a, b) => a.index - b.index)
      .map((r) => ({ seconds: r.outcome === 'ok' ? runSeconds(r) : null, exit_code: r.exit_code, outcome: r.outcome })),
    samples_per_second: stepTimed && rates.length > 0 ? { median: median(rates), ci: rateCi } : null,
    speedup: null,
  };
}

const byIndex = (records: readonly TrialRecord[], indices: readonly number[]) => {
  const want = new Set(indices);
  return records.filter((r) => want.has(r.index));
};

/** The summary of a `tunebench time` run from its result and its trial records. */
export function timeSummary(mode: TimeMode, result: RunResult, records: readonly TrialRecord[]): TimeSummary {
  const stage = result.stages[0];
  if (!stage) return { mode, run_dir: result.run_dir, commands: [], findings: ['nothing ran'] };
  const ofStage = records.filter((r) => r.stage === stage.name);
  if (stage.kind === 'compare') {
    const s = stage.result;
    const first = s.arms.find((a) => a.baseline)!;
    const firstFailed = first.ok_trials === 0;
    const commands = s.arms.map((arm) =>
      compareRow(arm, ofStage, { first: String(first.value), firstFailed }, s.noise_band),
    );
    const findings = commands.filter((_, i) => !s.arms[i]!.baseline).map((c) => `${c.label}: ${c.why}`);
    findings.push(
      'speed-ups are paired per round (the order reverses every round) with sequential 95% CIs, ' +
        'valid at the look that decided',
    );
    return { mode, run_dir: result.run_dir, commands, findings };
  }
  if (stage.kind === 'sweep') {
    const s = stage.result;
    const tied = new Set(s.tied);
    const leader = [...s.configs]
      .filter((c) => c.throughput !== null && c.status !== 'failed')
      .sort((a, b) => b.throughput!.estimate - a.throughput!.estimate)[0];
    // Rows in the order the values were given (-L), which is the order of their first trials.
    const first = (trials: readonly number[]) => (trials.length > 0 ? Math.min(...trials) : Infinity);
    const given = [...s.configs].sort((a, b) => first(a.trials) - first(b.trials));
    const commands = given.map((row) => {
      const label = mode === 'single' ? String(row.config['command']) : row.key;
      const m = measured(label, row.config, byIndex(ofStage, row.trials));
      if (mode === 'single')
        return { ...m, verdict: m.runs > 0 ? 'measured' : 'failed', why: row.why ?? `${m.runs} runs` };
      const verdict =
        row.status === 'failed' || m.runs === 0
          ? 'failed'
          : row.key === leader?.key
            ? 'best'
            : tied.has(row.key)
              ? 'tied with the best'
              : 'slower';
      const why =
        verdict === 'failed'
          ? (row.why ?? 'no run exited 0')
          : row.status === 'eliminated'
            ? `dropped after ${m.runs} runs: slower than the best (round-blocked test)`
            : verdict === 'slower'
              ? `slower than the best after ${m.runs} runs`
              : `${m.runs} runs`;
      return { ...m, verdict, why };
    });
    const findings: string[] = [];
    if (mode === 'scan') {
      const best = commands.find((c) => c.verdict === 'best');
      const ties = commands.filter((c) => c.verdict === 'tied with the best');
      findings.push(
        best
          ? ties.length === 0
            ? `${best.label} is the fastest, significantly ahead of every other value`
            : `${best.label} is the fastest by estimate; tied with it (no significant difference): ` +
              `${ties.map((t) => t.label).join(', ')}`
          : 'no value ran successfully',
      );
      const choice = best && ties.length > 0 ? choiceFinding(s, best.label) : null;
      if (choice) findings.push(choice);
      findings.push(
        'values are run in interleaved rounds; a value is dropped once a round-blocked test finds it slower',
      );
    }
    return { mode, run_dir: result.run_dir, commands, findings };
  }
  throw new Error(`tunebench time: unexpected ${stage.kind} stage`);
}

function compareRow(
  arm: CompareArmRow,
  records: readonly TrialRecord[],
  { first, firstFailed }: { first: string; firstFailed: boolean },
  band: number,
): TimedCommand {
  const m = measured(String(arm.value), { command: arm.value }, byIndex(records, arm.trials));
  if (m.failed_every_run)
    return {
      ...m,
      verdict: 'failed',
      why: arm.baseline ? 'no run exited 0, so nothing was compared' : 'no run exited 0',
    };
  if (arm.baseline) return { ...m, verdict: 'baseline', why: 'the first command: the others are compared with it' };
  if (firstFailed)
    return { ...m, verdict: 'not compared', why: `${first} failed at every run, so there is nothing to compare with` };
  if (arm.verdict === 'failed')
    return { ...m, verdict: 'failed', why: arm.stopped ?? 'a run failed, so it was not compared' };
  const r = arm.throughput_ratio;
  const ci = r ? `${fmtRatio(r.estimate, band)} [${fmtRatio(r.low, band)}, ${fmtRatio(r.high, band)}]` : '';
  const after = arm.decided_at !== null ? ` after ${arm.decided_at} rounds` : '';
  const why =
    arm.decision === 'faster'
      ? `${ci} as fast as ${first}: faster (decided${after})`
      : arm.decision === 'slower'
        ? `${ci} as fast as ${first}: slower (decided${after})`
        : arm.decision === 'equivalent'
          ? `${ci} as fast as ${first}: no significant difference (within ${fmtBand(band)}${after})`
          : r
            ? `${ci} as fast as ${first}: undecided${after}: ${undecidedCi(r, band)}; ` +
              moreRounds(r, band, r.n ?? arm.decided_at ?? 0)
            : 'undecided: fewer than 3 paired rounds';
  const verdict = arm.decision === 'undecided' ? 'undecided' : arm.verdict;
  return { ...m, verdict, speedup: r, why };
}

/**
 * How many rounds would decide, in words: the smallest change these runs could have called and the
 * rounds that would decide a difference the size of the estimate (`tunebench time --runs`).
 */
function moreRounds(r: Interval, band: number, rounds: number): string {
  const d = detectable(r, band, rounds);
  if (!d) return 'more --runs may decide';
  const could =
    `the smallest difference these ${rounds} rounds could call is a speed-up below ` +
    `${fmtRatio(d.slower_below)} or above ${fmtRatio(d.faster_above)}`;
  const size = `a difference the size of the estimate (${fmtChange(r.estimate)})`;
  if (d.rounds_to_decide === null) return `${could}; ${size} sits on the band's edge, where more rounds do not decide`;
  const inside = r.estimate >= 1 - band && r.estimate <= 1 + band;
  return (
    `${could}; ${size} would take about ${d.rounds_to_decide - rounds} more rounds ` +
    `to ${inside ? 'show within the band' : 'call'} (--runs ${d.rounds_to_decide})`
  );
}

type SweepSummaryOf = Extract<RunResult['stages'][number], { kind: 'sweep' }>['result'];

/**
 * The chosen value among tied ones, with the rule that picked it: the sweep keeps the cheapest of
 * the tied values shown to be within the noise band of the best, else the best (search/sweep.ts).
 * Cost compares the parameters in the order given: smaller numbers, false before true, and words
 * in alphabetical order count as cheaper (search/rank.ts).
 */
function choiceFinding(s: SweepSummaryOf, bestLabel: string): string | null {
  const chosen = s.configs.find((c) => c.key === s.chosen_key);
  if (!chosen) return null;
  const tied = s.configs.filter((c) => s.tied.includes(c.key) && c.key !== chosen.key);
  const cheaperTied = tied
    .filter((c) => cheaper(c.config, chosen.config, s.params) < 0)
    .sort((a, b) => cheaper(a.config, b.config, s.params));
  const kinds = new Set(s.params.flatMap((p) => s.configs.map((c) => typeof c.config[p])));
  const costs = [
    ...(kinds.has('number') ? ['smaller numbers'] : []),
    ...(kinds.has('boolean') ? ['false before true'] : []),
    ...(kinds.has('string') ? ['words in alphabetical order'] : []),
  ];
  const cost = `${costs.join(', ')} count as cheaper${s.params.length > 1 ? `, ${s.params.join(' first, then ')}` : ''}`;
  if (cheaperTied.length === 0) return `chosen: ${chosen.key}, the cheapest of the tied values (${cost})`;
  const list = cheaperTied.map((c) => c.key).join(', ');
  return chosen.key === bestLabel
    ? `chosen: ${chosen.key}, the fastest by estimate: the cheaper tied values (${list}) are not shown to be ` +
        `within the noise band of it, so the fastest is kept (${cost})`
    : `chosen: ${chosen.key}, the cheapest of the tied values shown to be within the noise band of the best; ` +
        `the cheaper ${list} ${cheaperTied.length === 1 ? 'is' : 'are'} not shown to be within it (${cost})`;
}

/** A scan's rows in the order given (every combination, the first -L slowest), named by -n where given. */
export function relabelScan(summary: TimeSummary, req: TimeRequest): TimeSummary {
  if (summary.mode !== 'scan') return summary;
  const key = (config: Readonly<Record<string, unknown>>) => JSON.stringify(req.scans.map((s) => config[s.name]));
  const order = scanConfigs(req).map(key);
  const at = (c: TimedCommand) => order.indexOf(key(c.config));
  const name = req.names?.[0];
  const commands = [...summary.commands].sort((a, b) => at(a) - at(b));
  return {
    ...summary,
    commands: name === undefined ? commands : commands.map((c) => ({ ...c, label: fillValues(name, c.config) })),
  };
}
