// Runs a compare stage: arms of one parameter in interleaved rounds through journaled trials
// (search/compare.ts decides each arm against the baseline at planned looks), then each arm's
// throughput and peak memory, its ratios to the baseline with sequential CIs, and the verdicts.
import type { Frozen } from '../../util/frozen.js';
import type { CompareStageSpec } from '../../experiment/schema.js';
import { runCompare, type CompareArm, type CompareRun } from '../../search/compare.js';
import { configKey } from '../../search/space.js';
import type { ArmTrialFn } from '../../search/sweep.js';
import { median } from 'simple-statistics';
import { logMeanInterval } from '../../stats/log-ratio.js';
import { ratioThroughput, stallFraction } from '../../stats/throughput.js';
import { memoryVerdict, speedVerdict } from '../../stats/verdict.js';
import type { TrialSpec } from '../../executors/executor.js';
import type { StageInput } from '../context.js';
import { failureCause, measuredPeakMemory } from '../../domain/index.js';
import type {
  CompareArmRow,
  CompareSummary,
  Config,
  Evidence,
  Outcome,
  ParamValue,
  RoleKind,
  StageNote,
  TrialRecord,
} from '../../domain/index.js';
import { pctInterval } from '../../report/format.js';
import { fmtBand } from '../../analysis/undecided.js';
import type { StageOutcomeOf } from '../../experiment/schema.js';

/** What a compare stage runs, fixed before its first trial. */
interface ComparePlan {
  readonly input: StageInput;
  readonly spec: Frozen<CompareStageSpec>;
  readonly name: string;
  readonly param: string;
  readonly baseline: ParamValue;
  readonly keyOf: (c: Config) => string;
  readonly specOf: (config: Config, o: { role: RoleKind; round: number }) => TrialSpec;
}

/** What a compare ran: the strategy's result and each arm's trials in run order, by arm key. */
interface CompareTrials {
  readonly result: CompareRun;
  readonly records: ReadonlyMap<string, readonly TrialRecord[]>;
}

const memoryOf = measuredPeakMemory;

export async function runCompareStage(
  input: StageInput,
  spec: Frozen<CompareStageSpec>,
  name: string,
): Promise<StageOutcomeOf<'compare'>> {
  const plan = planCompare({ input, spec, name });
  const trials = await runCompareTrials(plan);
  return summariseCompare(plan, trials);
}

function planCompare({
  input,
  spec,
  name,
}: {
  input: StageInput;
  spec: Frozen<CompareStageSpec>;
  name: string;
}): ComparePlan {
  const exp = input.experiment;
  const param = spec.param;
  const steps = spec.steps ?? exp.measure.steps;
  const specOf = (config: Config, o: { role: RoleKind; round: number }): TrialSpec => {
    const argv = spec.commands?.[String(config[param])];
    return {
      stage: name,
      role: { kind: o.role, round: o.round + 1 },
      config: { ...input.baseConfig, ...config },
      measure: { warmupSteps: exp.measure.warmup_steps, steps },
      ...(argv ? { argv } : {}),
    };
  };
  return {
    input,
    spec,
    name,
    param,
    baseline: spec.baseline ?? spec.arms[0]!,
    keyOf: (c: Config) => configKey(c, [param]),
    specOf,
  };
}

/** The warm-ups, then the arms in interleaved rounds until each is decided (search/compare.ts). */
async function runCompareTrials(plan: ComparePlan): Promise<CompareTrials> {
  const { input, spec, name, param, keyOf, specOf } = plan;
  const records = new Map<string, TrialRecord[]>();
  let n = 0;
  const expected = spec.arms.length * spec.repeats;
  const run: ArmTrialFn = async (config, o) => {
    n += 1;
    const record = await input.trials.run(specOf(config, o), { n, ofAbout: Math.max(n, expected), show: [param] });
    const list = records.get(keyOf(config)) ?? [];
    list.push(record);
    records.set(keyOf(config), list);
    return {
      outcome: record.outcome,
      reason: failureCause(record),
      steps: record.steps,
      wallSeconds: record.wall_seconds,
      memory: memoryOf(record),
    };
  };
  await input.trials.warmups(
    name,
    spec.warmup_trials,
    spec.arms.map((v) => specOf({ [param]: v }, { role: 'warm-up', round: 0 })),
    [param],
  );
  const baseIndex = Math.max(0, spec.arms.indexOf(plan.baseline));
  const result = await runCompare(run, {
    arms: spec.arms.map((v) => ({ [param]: v })),
    baseline: baseIndex,
    keyOf,
    minRounds: spec.repeats,
    maxRounds: spec.max_rounds,
    noiseBand: spec.noise_band,
    budget: spec.budget,
    plan: (trials) => input.trials.plan(trials.map((t) => specOf(t.config, t.opts))),
  });
  return { result, records };
}

/** The rows, notes, evidence and choice of a compare, from what it ran. */
function summariseCompare(plan: ComparePlan, { result, records }: CompareTrials): StageOutcomeOf<'compare'> {
  const { spec, name, param, baseline, keyOf } = plan;
  const band = spec.noise_band;
  const okOf = (value: ParamValue) => (records.get(keyOf({ [param]: value })) ?? []).filter((r) => r.outcome === 'ok');
  const base = okOf(baseline);
  const rows = result.arms.map((arm) => armRow({ arm, param, all: records.get(arm.key) ?? [], baseOk: base.length }));
  const notes = [...result.notes, ...armNotes({ rows, param, baseline, band, baseOk: base.length })];
  const { chosen: chosenRow, faster, nameOnly, flagged } = chooseArm(rows, param);
  const baseRow = rows.find((r) => r.baseline)!;
  if (nameOnly) notes.push({ kind: 'name-only', param, flagged: flagged.map((r) => r.value) });
  const rule = faster
    ? `compare: significantly faster than ${param}=${String(baseline)} ` +
      `(throughput ratio ${pctInterval(faster.throughput_ratio!)}, outside the ${fmtBand(band)} noise band)`
    : nameOnly && flagged.some((r) => r.verdict === 'faster')
      ? 'compare: the arms differ in name only on this device (no empty_cache() call in any arm), ' +
        `so a measured speed-up is the machine's; kept the baseline ${param}=${String(baseline)}`
      : `compare: no arm significantly faster than the baseline ${param}=${String(baseline)}; kept the baseline`;
  const evidence: Record<string, Evidence> = {};
  if (baseRow.ok_trials > 0 || faster) {
    evidence[param] = { stage: name, rule, samples_per_second: chosenRow.throughput, trials: chosenRow.trials };
  } else {
    notes.push({ kind: 'baseline-failed', param, baseline });
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
  return {
    name,
    kind: 'compare',
    chosen: evidence[param] ? { [param]: chosenRow.value } : {},
    evidence,
    notes,
    result: summary,
  };
}

/** One arm's row: its trials, failures, throughput and memory, ratios to the baseline and verdicts. */
function armRow({
  arm,
  param,
  all,
  baseOk,
}: {
  arm: CompareArm;
  param: string;
  /** The arm's trials in run order. */
  all: readonly TrialRecord[];
  /** The baseline's successful trials. */
  baseOk: number;
}): CompareArmRow {
  const ok = all.filter((r) => r.outcome === 'ok');
  const failures: Partial<Record<Outcome, number>> = {};
  for (const r of all) if (r.outcome !== 'ok') failures[r.outcome] = (failures[r.outcome] ?? 0) + 1;
  const isBaseline = arm.baseline;
  const memory = ok.map(memoryOf).filter((b): b is number => b !== null);
  const reported = (field: string) =>
    ok.map((r) => r.workload_report?.[field]).filter((v): v is number => typeof v === 'number');
  const calls = reported('empty_cache_calls');
  const callSeconds = reported('empty_cache_seconds');
  const failed = ok.length === 0 || baseOk === 0;
  return {
    value: arm.config[param]!,
    baseline: isBaseline,
    ...(calls.length > 0
      ? { empty_cache: { calls: median(calls), seconds: callSeconds.length > 0 ? median(callSeconds) : 0 } }
      : {}),
    trials: all.map((r) => r.index),
    ok_trials: ok.length,
    failures,
    ...(arm.stopped ? { stopped: arm.stopped } : {}),
    throughput: logMeanInterval(
      ok.map((r) => ratioThroughput(r.steps)).filter((v): v is number => v !== null && v > 0),
      0.05,
    ),
    peak_memory: logMeanInterval(
      memory.filter((b) => b > 0),
      0.05,
    ),
    stall_fraction: stallFraction(ok.flatMap((r) => r.steps)),
    throughput_ratio: isBaseline ? null : arm.ratio,
    memory_ratio: isBaseline ? null : arm.memoryRatio,
    throughput_p: isBaseline ? null : (arm.ratio?.p ?? null),
    memory_p: isBaseline ? null : (arm.memoryRatio?.p ?? null),
    decision: isBaseline ? 'baseline' : failed ? 'failed' : arm.decision,
    decided_at: isBaseline ? null : arm.decidedAt,
    verdict: isBaseline
      ? 'baseline'
      : failed
        ? 'failed'
        : speedVerdict(arm.decision === 'faster' ? 'higher' : arm.decision === 'slower' ? 'lower' : 'same'),
    memory_verdict: isBaseline
      ? 'baseline'
      : failed
        ? 'failed'
        : memory.length === 0
          ? 'not measured'
          : memoryVerdict(
              arm.memoryDecision === 'more memory' ? 'higher' : arm.memoryDecision === 'less memory' ? 'lower' : 'same',
            ),
  };
}

/** A note per arm against the baseline, then what the CIs are. */
function armNotes({
  rows,
  param,
  baseline,
  band,
  baseOk,
}: {
  rows: readonly CompareArmRow[];
  param: string;
  baseline: ParamValue;
  band: number;
  /** The baseline's successful trials. */
  baseOk: number;
}): StageNote[] {
  const notes: StageNote[] = [];
  for (const row of rows.filter((r) => !r.baseline)) {
    if (row.verdict === 'failed' || row.verdict === 'baseline') {
      notes.push({ kind: 'arm-not-compared', param, value: row.value, baseline, baseline_failed: baseOk === 0 });
      continue;
    }
    const decision = row.decision === 'baseline' || row.decision === 'failed' ? null : (row.decision ?? null);
    const memory =
      row.memory_verdict === 'baseline' || row.memory_verdict === 'failed' ? 'not measured' : row.memory_verdict;
    notes.push({
      kind: 'arm-verdict',
      param,
      value: row.value,
      baseline,
      verdict: row.verdict,
      decision,
      decided_at: row.decided_at ?? null,
      band,
      throughput_ratio: row.throughput_ratio,
      memory_ratio: row.memory_ratio,
      memory_verdict: memory,
    });
  }
  notes.push({ kind: 'sequential-cis', arms: rows.length - 1 });
  return notes;
}

/**
 * The arm a compare keeps: the fastest arm shown faster than the baseline, else the baseline. When
 * (a compare of empty_cache policies) the workload reported calling empty_cache() in no arm (it acts on CUDA only), the arms ran the same
 * code, so a measured difference is the machine's (contention, drift), never the policy's: the
 * baseline is kept and the arms with a verdict anyway are returned as flagged.
 */
export function chooseArm(
  rows: CompareArmRow[],
  param: string,
): {
  chosen: CompareArmRow;
  faster: CompareArmRow | undefined;
  nameOnly: boolean;
  flagged: CompareArmRow[];
} {
  const baseRow = rows.find((r) => r.baseline);
  if (!baseRow) throw new Error('compare: no baseline arm');
  // Only the empty_cache policies are names without code when no arm calls it; another parameter (an
  // allocator setting) changes the run whatever the empty_cache calls were.
  const nameOnly = param === 'empty_cache' && rows.every((r) => r.empty_cache?.calls === 0);
  const flagged = nameOnly ? rows.filter((r) => r.verdict === 'faster' || r.verdict === 'slower') : [];
  const faster = nameOnly
    ? undefined
    : rows
        .filter((r) => r.verdict === 'faster')
        .sort((a, b) => (b.throughput_ratio?.estimate ?? 0) - (a.throughput_ratio?.estimate ?? 0))[0];
  return { chosen: faster ?? baseRow, faster, nameOnly, flagged };
}
