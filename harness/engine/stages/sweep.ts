// Runs a sweep stage: prune by constraints, run grid or race through journaled trials, rank, choose.
import type { Frozen } from '../../util/frozen.js';
import type { SweepStageSpec } from '../../experiment/schema.js';
import { Constraints } from '../../search/constraints.js';
import { configKey, grid, gridSize } from '../../search/space.js';
import { runSweep, type ArmTrialFn, type SweepResult } from '../../search/sweep.js';
import { stallFraction } from '../../stats/throughput.js';
import type { TrialSpec } from '../../executors/executor.js';
import { deviceMatrix } from './device-matrix.js';
import type { StageInput } from '../context.js';
import { failureCause } from '../../domain/index.js';
import type { Config, Evidence, RoleKind, StageNote, SweepConfigRow, SweepSummary } from '../../domain/index.js';
import { SWEEP_REPEATS } from '../../experiment/schema.js';
import type { StageOutcomeOf } from '../../experiment/schema.js';

/** What a sweep stage runs, fixed before its first trial: the configs left after pruning and how to run them. */
interface SweepPlan {
  readonly input: StageInput;
  readonly spec: Frozen<SweepStageSpec>;
  readonly name: string;
  /** The swept parameters, in the experiment's order. */
  readonly names: string[];
  readonly keyOf: (c: Config) => string;
  readonly runnable: Config[];
  /** A row for each config the constraints pruned, in grid order. */
  readonly pruned: SweepConfigRow[];
  readonly repeats: number;
  readonly specOf: (config: Config, o: { steps?: number; role: RoleKind }) => TrialSpec;
}

/** What a sweep ran: the strategy's result and each config's trial indices in run order, by key. */
interface SweepTrials {
  readonly result: SweepResult;
  readonly indices: Map<string, number[]>;
}

export async function runSweepStage(
  input: StageInput,
  spec: Frozen<SweepStageSpec>,
  name: string,
): Promise<StageOutcomeOf<'sweep'>> {
  const plan = planSweep({ input, spec, name });
  const trials = await runSweepTrials(plan);
  return summariseSweep(plan, trials);
}

function planSweep({
  input,
  spec,
  name,
}: {
  input: StageInput;
  spec: Frozen<SweepStageSpec>;
  name: string;
}): SweepPlan {
  const exp = input.experiment;
  const names = Object.keys(spec.params);
  const keyOf = (c: Config) => configKey(c, names);
  const candidates = grid(spec.params, spec.applies_when);
  const full = gridSize(spec.params).total;
  if (candidates.length < full) {
    input.progress.note(
      `${full - candidates.length} of ${full} configs coincide because ${Object.entries(spec.applies_when)
        .map(([p, c]) => `${p} applies only when ${c} is set`)
        .join(', ')}; ${candidates.length} remain`,
    );
  }
  const { runnable, pruned } = pruneConfigs({ input, spec, candidates, keyOf });
  const steps = spec.steps ?? exp.measure.steps;
  return {
    input,
    spec,
    name,
    names,
    keyOf,
    runnable,
    pruned,
    repeats: spec.repeats ?? SWEEP_REPEATS[spec.strategy],
    specOf: (config, o) => ({
      stage: name,
      role: { kind: o.role },
      config: { ...input.baseConfig, ...config },
      measure: { warmupSteps: exp.measure.warmup_steps, steps: o.steps ?? steps },
    }),
  };
}

/** The candidates that pass the stage's constraints, and a noted, trial-less row for each that does not. */
function pruneConfigs({
  input,
  spec,
  candidates,
  keyOf,
}: {
  input: StageInput;
  spec: Frozen<SweepStageSpec>;
  candidates: readonly Config[];
  keyOf: (c: Config) => string;
}): { runnable: Config[]; pruned: SweepConfigRow[] } {
  const constraints = new Constraints(spec.constraints);
  const runnable: Config[] = [];
  const pruned: SweepConfigRow[] = [];
  for (const c of candidates) {
    const reason = constraints.check({ ...input.baseConfig, ...c });
    if (reason) {
      pruned.push({
        key: keyOf(c),
        config: c,
        status: 'pruned',
        why: reason,
        trials: [],
        throughput: null,
        stall_fraction: null,
      });
      input.progress.note(`pruned ${keyOf(c)}: ${reason}`);
    } else runnable.push(c);
  }
  return { runnable, pruned };
}

/** The warm-ups, then the grid or race over the runnable configs (search/sweep.ts). */
async function runSweepTrials(plan: SweepPlan): Promise<SweepTrials> {
  const { input, spec, name, names, keyOf, runnable, repeats, specOf } = plan;
  const strategy = spec.strategy;
  const indices = new Map<string, number[]>();
  let n = 0;
  const expected =
    strategy === 'grid'
      ? runnable.length * repeats
      : runnable.length * spec.min_rounds + Math.ceil(runnable.length / 3) * (repeats - spec.min_rounds);
  const run: ArmTrialFn = async (config, o) => {
    n += 1;
    const s = specOf(config, o);
    const record = await input.trials.run(
      { stage: name, role: s.role, config: s.config, measure: s.measure },
      {
        n,
        ofAbout: expected,
        show: names,
      },
    );
    const list = indices.get(keyOf(config)) ?? [];
    list.push(record.index);
    indices.set(keyOf(config), list);
    return {
      outcome: record.outcome,
      reason: failureCause(record),
      steps: record.steps,
      wallSeconds: record.wall_seconds,
    };
  };
  await input.trials.warmups(
    name,
    spec.warmup_trials,
    runnable.map((c) => specOf(c, { role: 'warm-up' })),
    names,
  );
  const result = await runSweep(run, {
    strategy,
    configs: runnable,
    keyOf,
    repeats,
    budget: spec.budget,
    costOrder: spec.cost ?? names,
    inert: inertParams(input, names).map((i) => i.param),
    minRounds: spec.min_rounds,
    noiseBand: spec.noise_band,
    pruned: plan.pruned.length,
    plan: (trials) => input.trials.plan(trials.map((t) => specOf(t.config, t.opts))),
  });
  return { result, indices };
}

/** The ranked rows, evidence, notes and choice of a sweep, from what it ran. */
function summariseSweep(plan: SweepPlan, { result, indices }: SweepTrials): StageOutcomeOf<'sweep'> {
  const { input, spec, name, names, keyOf } = plan;
  const rows: SweepConfigRow[] = [...plan.pruned];
  for (const arm of result.arms) {
    const ok = arm.trials.filter((t) => t.outcome === 'ok').flatMap((t) => t.steps);
    rows.push({
      key: arm.key,
      config: arm.config,
      status: arm.status,
      ...(arm.why ? { why: arm.why } : {}),
      trials: indices.get(arm.key) ?? [],
      throughput: arm.ci,
      stall_fraction: stallFraction(ok),
    });
  }
  const chosen = result.ranking.chosen;
  const evidence: Record<string, Evidence> = {};
  const notes: StageNote[] = [...result.notes];
  if (chosen) {
    for (const p of names.filter((q) => chosen.config[q] !== undefined)) {
      evidence[p] = {
        stage: name,
        rule: result.ranking.note ?? 'best throughput',
        samples_per_second: chosen.ci,
        trials: indices.get(chosen.key) ?? [],
      };
    }
  } else {
    notes.push(nothingChosen(input, [...indices.values()].flat()));
  }
  const inert = inertParams(input, names);
  notes.unshift(...inert.map((i): StageNote => ({ kind: 'inert-param', param: i.param, why: i.why })));
  const summary: SweepSummary = {
    strategy: spec.strategy,
    params: names,
    configs: rows.sort((a, b) => (b.throughput?.estimate ?? -1) - (a.throughput?.estimate ?? -1)),
    chosen_key: chosen?.key ?? null,
    tied: result.ranking.tied.map((t) => t.key),
    trials: result.trials,
    trial_seconds: result.trialSeconds,
    budget_exhausted: result.budgetExhausted,
    ...(inert.length > 0 ? { inert } : {}),
  };
  const stageRecords = input.trials.records.filter((r) => r.stage === name);
  if (stageRecords.some((r) => r.node)) summary.by_device = deviceMatrix(stageRecords, keyOf, spec.cost ?? names);
  return {
    name,
    kind: 'sweep',
    chosen: chosen
      ? Object.fromEntries(names.filter((p) => chosen.config[p] !== undefined).map((p) => [p, chosen.config[p]!]))
      : {},
    evidence,
    notes,
    result: summary,
  };
}

/**
 * Why nothing was chosen, from this run of the stage's own trials: how many failed and how, and the
 * first failure's reason (an OOM at this batch, a workload that never stops).
 */
function nothingChosen(input: StageInput, mine: readonly number[]): StageNote {
  const records = mine.flatMap((i) => (input.trials.records[i] ? [input.trials.records[i]] : []));
  const failed = records.filter((r) => r.outcome !== 'ok');
  const first = failed[0];
  return {
    kind: 'nothing-chosen',
    trials: records.length,
    failed: failed.length,
    outcomes: [...new Set(failed.map((r) => r.outcome))],
    first: first
      ? {
          trial: first.index,
          outcome: first.outcome,
          reason: first.reason,
          ...(first.error ? { error: first.error } : {}),
        }
      : null,
  };
}

/** Swept parameters that do nothing on this machine: pin_memory without a GPU. */
function inertParams(input: StageInput, names: readonly string[]): NonNullable<SweepSummary['inert']> {
  return names.includes('pin_memory') && input.hasCuda === false ? [{ param: 'pin_memory', why: 'no-gpu' }] : [];
}
