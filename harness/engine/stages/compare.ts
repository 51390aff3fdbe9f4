// Runs a compare stage: arms of one parameter interleaved through journaled trials, then each arm's
// median throughput and peak memory with bootstrap CIs, and its ratios to the baseline with verdicts.
import type { CompareStageSpec } from '../../experiment/schema.js';
import { runCompare } from '../../search/compare.js';
import { configKey } from '../../search/space.js';
import type { ArmTrialFn } from '../../search/sweep.js';
import { median } from 'simple-statistics';
import { bootstrapMedian, bootstrapMedianRatio, type Interval } from '../../stats/bootstrap.js';
import { decideChange } from '../../stats/decision.js';
import { medianRateInterval, medianRateRatioInterval, stallFraction, trialRates } from '../../stats/throughput.js';
import { memoryVerdict, speedVerdict, type MemoryVerdict, type SpeedVerdict } from '../../stats/verdict.js';
import type { ParamValue } from '../../experiment/schema.js';
import type { Config, Outcome, TrialRecord } from '../../trial/record.js';
import type { TrialSpec } from '../../executors/executor.js';
import { planTrials, runJournaledTrial, type Evidence, type StageContext, type StageOutcome } from '../context.js';

export interface CompareArmRow {
  value: ParamValue;
  baseline: boolean;
  trials: number[];
  ok_trials: number;
  failures: Partial<Record<Outcome, number>>;
  /** Why the arm stopped early, when it did. */
  stopped?: string;
  /** Median over trials of each trial's samples/s. */
  throughput: Interval | null;
  /** Median over trials of each trial's peak memory in bytes: the device's when reported, else RSS of the process tree. */
  peak_memory: Interval | null;
  stall_fraction: number | null;
  /** Arm / baseline; null for the baseline and for arms without a successful trial. */
  throughput_ratio: Interval | null;
  memory_ratio: Interval | null;
  /** Mann-Whitney two-sided p-values against the baseline (per-trial throughput, per-trial peak memory). */
  throughput_p: number | null;
  memory_p: number | null;
  verdict: SpeedVerdict | 'baseline' | 'failed';
  /** What the Python adapter reported about the policy: calls to empty_cache() and their time, per trial (medians). */
  empty_cache?: { calls: number; seconds: number };
  memory_verdict: MemoryVerdict | 'baseline' | 'failed' | 'not measured';
}

export interface CompareSummary {
  param: string;
  baseline: ParamValue;
  noise_band: number;
  arms: CompareArmRow[];
  rounds: number;
  trials: number;
  trial_seconds: number;
  budget_exhausted: boolean;
  chosen: ParamValue;
}

export async function runCompareStage(ctx: StageContext, spec: CompareStageSpec, name: string): Promise<StageOutcome> {
  const exp = ctx.experiment;
  const param = spec.param;
  const baseline = spec.baseline ?? spec.arms[0]!;
  const steps = spec.steps ?? exp.measure.steps;
  const keyOf = (c: Config) => configKey(c, [param]);
  const records = new Map<string, TrialRecord[]>();
  let n = 0;
  const expected = spec.arms.length * spec.repeats;
  const specOf = (config: Config, o: { role: string; round: number }): TrialSpec => ({
    stage: name,
    role: `${o.role} round ${o.round + 1}`,
    config: { ...ctx.baseConfig, ...config },
    measure: { warmupSteps: exp.measure.warmup_steps, steps },
  });
  const run: ArmTrialFn = async (config, o) => {
    n += 1;
    const s = specOf(config, o);
    const record = await runJournaledTrial(ctx, name, s.role, s.config, s.measure, { n, ofAbout: Math.max(n, expected), show: [param] });
    const list = records.get(keyOf(config)) ?? [];
    list.push(record);
    records.set(keyOf(config), list);
    return { outcome: record.outcome, reason: record.reason, steps: record.steps, wallSeconds: record.wall_seconds };
  };
  const result = await runCompare(run, {
    arms: spec.arms.map((v) => ({ [param]: v })),
    keyOf,
    repeats: spec.repeats,
    budget: spec.budget,
    plan: (trials) => planTrials(ctx, trials.map((t) => specOf(t.config, t.opts))),
  });

  const seed = exp.seed;
  const band = spec.noise_band;
  const okOf = (value: ParamValue) => (records.get(keyOf({ [param]: value })) ?? []).filter((r) => r.outcome === 'ok');
  const memoryOf = (rs: TrialRecord[]) => rs.map((r) => r.peak_device_bytes ?? r.peak_rss_bytes).filter((b): b is number => b !== null);
  const base = okOf(baseline);
  const rows: CompareArmRow[] = result.arms.map((arm) => {
    const value = arm.config[param]!;
    const all = records.get(arm.key) ?? [];
    const ok = all.filter((r) => r.outcome === 'ok');
    const failures: Partial<Record<Outcome, number>> = {};
    for (const r of all) if (r.outcome !== 'ok') failures[r.outcome] = (failures[r.outcome] ?? 0) + 1;
    const isBaseline = value === baseline;
    const stepsOf = (rs: TrialRecord[]) => rs.map((r) => r.steps);
    const throughputRatio = !isBaseline && ok.length > 0 && base.length > 0 ? medianRateRatioInterval(stepsOf(base), stepsOf(ok), { seed }) : null;
    const memory = memoryOf(ok);
    const memoryRatio = !isBaseline && memory.length > 0 && memoryOf(base).length > 0 ? bootstrapMedianRatio(memoryOf(base), memory, { seed }) : null;
    // Two gates: Mann-Whitney p < 0.05 on the per-trial values and the ratio's CI outside the band.
    const speed = !isBaseline && ok.length > 0 && base.length > 0 ? decideChange(trialRates(stepsOf(base)), trialRates(stepsOf(ok)), throughputRatio, { band }) : null;
    const mem = memoryRatio ? decideChange(memoryOf(base), memory, memoryRatio, { band }) : null;
    const reported = (field: string) => ok.map((r) => r.workload_report?.[field]).filter((v): v is number => typeof v === 'number');
    const calls = reported('empty_cache_calls');
    const callSeconds = reported('empty_cache_seconds');
    return {
      value,
      baseline: isBaseline,
      ...(calls.length > 0 ? { empty_cache: { calls: median(calls), seconds: callSeconds.length > 0 ? median(callSeconds) : 0 } } : {}),
      trials: all.map((r) => r.index),
      ok_trials: ok.length,
      failures,
      ...(arm.stopped ? { stopped: arm.stopped } : {}),
      throughput: medianRateInterval(stepsOf(ok), { seed }),
      peak_memory: bootstrapMedian(memory, { seed }),
      stall_fraction: stallFraction(ok.flatMap((r) => r.steps)),
      throughput_ratio: throughputRatio,
      memory_ratio: memoryRatio,
      throughput_p: speed ? speed.p : null,
      memory_p: mem ? mem.p : null,
      verdict: isBaseline ? 'baseline' : ok.length === 0 || base.length === 0 ? 'failed' : speedVerdict(speed!.direction),
      memory_verdict: isBaseline ? 'baseline' : ok.length === 0 || base.length === 0 ? 'failed' : memory.length === 0 ? 'not measured' : memoryVerdict(mem!.direction),
    };
  });

  const notes = [...result.notes];
  const pct = (r: Interval) => `${fmtPct(r.estimate)} [${fmtPct(r.low)}, ${fmtPct(r.high)}]`;
  for (const row of rows.filter((r) => !r.baseline)) {
    const label = `${param}=${String(row.value)} vs ${String(baseline)}`;
    if (row.verdict === 'failed') {
      notes.push(`${label}: ${base.length === 0 ? 'the baseline' : 'this arm'} has no successful trial, so there is nothing to compare`);
      continue;
    }
    const speed = row.throughput_ratio ? `throughput ${pct(row.throughput_ratio)}` : 'throughput not comparable';
    const memory = row.memory_ratio ? `, peak memory ${pct(row.memory_ratio)} (${row.memory_verdict})` : '';
    notes.push(`${label}: ${row.verdict}; ${speed}${memory}`);
  }
  if (rows.every((r) => r.empty_cache?.calls === 0)) {
    notes.push('the workload called empty_cache() in no arm (it only acts on CUDA): on this device the policies differ in name only, so "no significant difference" is the expected verdict');
  }
  const faster = rows.filter((r) => r.verdict === 'faster').sort((a, b) => (b.throughput?.estimate ?? 0) - (a.throughput?.estimate ?? 0))[0];
  const baseRow = rows.find((r) => r.baseline)!;
  const chosenRow = faster ?? baseRow;
  const rule = faster
    ? `compare: significantly faster than ${param}=${String(baseline)} (throughput ratio ${pct(faster.throughput_ratio!)}, outside the ${fmtBand(band)} noise band)`
    : `compare: no arm significantly faster than the baseline ${param}=${String(baseline)}; kept the baseline`;
  const evidence: Record<string, Evidence> = {};
  if (baseRow.ok_trials > 0 || faster) {
    evidence[param] = { stage: name, rule, samples_per_second: chosenRow.throughput, trials: chosenRow.trials };
  } else {
    notes.push(`the baseline ${param}=${String(baseline)} has no successful trial; nothing was chosen`);
  }
  const summary: CompareSummary = {
    param,
    baseline,
    noise_band: band,
    arms: rows,
    rounds: result.rounds,
    trials: result.trials,
    trial_seconds: result.trialSeconds,
    budget_exhausted: result.budgetExhausted,
    chosen: chosenRow.value,
  };
  return { name, kind: 'compare', chosen: evidence[param] ? { [param]: chosenRow.value } : {}, evidence, notes, result: summary };
}

/** A ratio as a signed percentage change: 1.034 -> "+3.4%". */
export function fmtPct(ratio: number): string {
  const p = (ratio - 1) * 100;
  return `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`;
}

function fmtBand(band: number): string {
  return `+/-${(band * 100).toFixed(1)}%`;
}
