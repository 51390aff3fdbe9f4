// A later stage that fails at the batch an earlier max-batch stage chose (every config of a loader sweep
// ran out of memory at it, a compare whose baseline did cannot compare, or the config a stage chose did in
// some of its trials) is the answer failing, not the workload: the batch is lowered and the stage runs
// again at it. The lowering runs under the sweep's cheapest config (every config failed) or the config that
// failed, each run as the confirmation runs (until memory flattens); where the max-batch stage measured its
// band, the failure joins the band's runs and the band model places the lowered batch, which passes
// repeat_boundary + 1 runs (else one run holds). A batch that failed is never left in the config: when
// nothing lower holds, the batch is removed and the run reports the failure (exit 1).
import type { MaxBatchStageSpec, StageSpec } from '../../experiment/schema.js';
import { cheaper } from '../../search/rank.js';
import { configKey } from '../../search/space.js';
import { runJournaledTrial, type StageContext } from '../context.js';
import { lowerFailed, maxBatchSpec, sameConfig } from './final-confirm.js';
import { failureHead, loweredHow, underWhat } from '../../report/stage-failure.js';
import { survival } from './max-batch.js';
import { confirmationMeasure } from '../../search/confirmation.js';
import type {
  Config,
  Evidence,
  StageFailure,
  StageLowering,
  StageOutcome,
  StageOutcomeOf,
  TrialRecord,
} from '../../domain/index.js';

/** Times a stage runs again at a lower batch before the run gives up on it. */
const MAX_RETRIES = 2;

export interface FailedStageRun {
  spec: StageSpec;
  name: string;
  /** The stages before it (the max-batch stage that chose the batch is among them). */
  outcomes: StageOutcome[];
  evidence: Record<string, Evidence>;
  /** Runs the stage again (with the run's current config). */
  rerun: () => Promise<StageOutcome>;
}

/**
 * Runs `first` through the lowering: while every config of the stage OOMed at the chosen batch, lowers
 * the batch and runs the stage again. Returns the last outcome, and the failure when no lower batch rescued it.
 */
export async function lowerAfterFailure(
  ctx: StageContext,
  first: StageOutcome,
  x: FailedStageRun,
): Promise<{ outcome: StageOutcome; failure?: StageFailure }> {
  let outcome = first;
  for (let attempt = 0; ; attempt++) {
    const owner = ownerOfBatch(ctx, x.outcomes);
    const failure = owner ? failureAtBatch(ctx, outcome, owner) : undefined;
    if (!owner || !failure) return { outcome };
    if (attempt === MAX_RETRIES) {
      dropBatch(ctx, owner.outcome, x.evidence, owner.spec.param);
      return { outcome, failure };
    }
    const lowering = await lowerUnder(ctx, owner, failure, loweringConfig(ctx, outcome, x.spec, failure));
    (owner.outcome.result.lowered_after ??= []).push(lowering);
    if (lowering.batch === null) {
      dropBatch(ctx, owner.outcome, x.evidence, owner.spec.param);
      outcome.notes.unshift(loweringNote(lowering, owner.spec.param));
      return { outcome, failure };
    }
    setBatch(ctx, owner.outcome, x.evidence, lowering);
    ctx.progress.stage(x.name, `${x.spec.kind} again, at the lowered ${owner.spec.param}=${lowering.batch}`);
    outcome = await x.rerun();
    outcome.notes.unshift(loweringNote(lowering, owner.spec.param));
  }
}

/** "stage loader: every config OOMed at batch_size 200; max-batch-1 lowered it to 176 (184 failed) ...". */
export function loweringNote(l: StageLowering, param: string): string {
  const f = l.failure;
  const head = failureHead(f);
  if (l.batch === null)
    return `${head}, and no lower ${param} held under ${underWhat(f)} in ${l.trials.length} trials; no ${param} is written`;
  return (
    `${head}; ${f.chosen_by} lowered it to ${l.batch} ${loweredHow(l)}, which ` +
    `${l.survived?.statement ?? 'held'}, and the stage ran again at ${l.batch}`
  );
}

interface Owner {
  outcome: StageOutcomeOf<'max-batch'>;
  spec: MaxBatchStageSpec;
}

/** The max-batch stage whose chosen batch the run still uses. */
function ownerOfBatch(ctx: StageContext, outcomes: readonly StageOutcome[]): Owner | undefined {
  for (const o of [...outcomes].reverse()) {
    if (o.kind !== 'max-batch' || o.result.chosen === null) continue;
    const spec = maxBatchSpec(ctx, o.name);
    if (spec && ctx.baseConfig[spec.param] === o.result.chosen) return { outcome: o, spec };
  }
  return undefined;
}

/**
 * The failure at the owner's batch, if any: chosen-config-oom when the config the stage chose had an OOM
 * there; else, when the stage chose nothing and a config it ran had one, every-config-oom where each config
 * did (a sweep: every config that was not pruned; another stage: every trial failed, some by OOM), else
 * oom-at-batch (a compare whose baseline OOMed cannot compare).
 */
export function failureAtBatch(ctx: StageContext, outcome: StageOutcome, owner: Owner): StageFailure | undefined {
  const param = owner.spec.param;
  const batch = owner.outcome.result.chosen!;
  const oomAt = (t: TrialRecord) => t.outcome === 'oom' && t.config[param] === batch;
  if (Object.keys(outcome.chosen).length > 0) {
    // The stage chose a config that ran out of memory at the batch (a compare's arm that passed some rounds):
    // its choice was measured at a batch the run cannot write.
    const chosen = { ...ctx.baseConfig, ...outcome.chosen };
    const mine = ctx.records.filter((r) => r.stage === outcome.name && sameConfig(r.config, chosen));
    const oom = mine.filter(oomAt).length;
    if (oom === 0) return undefined;
    return {
      stage: outcome.name,
      kind: 'chosen-config-oom',
      param,
      batch,
      chosen_by: owner.outcome.name,
      configs: 1,
      chosen: outcome.chosen,
      trials: { ran: mine.length, oom },
    };
  }
  const groups = trialGroups(ctx, outcome);
  const failed = groups.filter((g) => g.some(oomAt));
  if (failed.length === 0) return undefined;
  const every =
    failed.length === groups.length &&
    (outcome.kind === 'sweep' || groups.every((g) => !g.some((t) => t.outcome === 'ok')));
  return {
    stage: outcome.name,
    kind: every ? 'every-config-oom' : 'oom-at-batch',
    param,
    batch,
    chosen_by: owner.outcome.name,
    configs: failed.length,
    ...(every ? {} : { ran: groups.length }),
  };
}

/** The stage's trials grouped by config: a sweep's rows that ran, else the stage's records by config. */
function trialGroups(ctx: StageContext, outcome: StageOutcome): TrialRecord[][] {
  if (outcome.kind === 'sweep')
    return outcome.result.configs
      .filter((c) => c.status !== 'pruned' && c.trials.length > 0)
      .map((c) => c.trials.flatMap((i) => (ctx.records[i] ? [ctx.records[i]] : [])));
  const mine = ctx.records.filter((r) => r.stage === outcome.name);
  const byKey = new Map<string, TrialRecord[]>();
  for (const r of mine) {
    const key = configKey(r.config, Object.keys(r.config).sort());
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  return [...byKey.values()];
}

/**
 * The config the lowering runs with: where every config failed, a sweep's cheapest config by its cost order
 * on top of the run's (another stage: the run's); else the config of the stage's first OOM at the batch, the
 * one the stage needs to run.
 */
function loweringConfig(ctx: StageContext, outcome: StageOutcome, spec: StageSpec, failure: StageFailure): Config {
  if (failure.kind !== 'every-config-oom') {
    const first = ctx.records.find(
      (r) =>
        r.stage === outcome.name &&
        r.outcome === 'oom' &&
        r.config[failure.param] === failure.batch &&
        Object.entries(failure.chosen ?? {}).every(([k, v]) => r.config[k] === v),
    );
    if (first) return Object.fromEntries(Object.entries(first.config).filter(([k]) => k !== failure.param));
  }
  if (outcome.kind !== 'sweep' || spec.kind !== 'sweep') return { ...ctx.baseConfig };
  const ran = outcome.result.configs.filter((c) => c.status !== 'pruned' && c.trials.length > 0);
  const order = spec.cost ?? outcome.result.params;
  const lightest = [...ran].sort((a, b) => cheaper(a.config, b.config, order))[0];
  return { ...ctx.baseConfig, ...(lightest?.config ?? {}) };
}

/** Lowers below the failed batch with `config`, each run as the owner's confirmation runs: until memory flattens. */
async function lowerUnder(
  ctx: StageContext,
  owner: Owner,
  failure: StageFailure,
  config: Config,
): Promise<StageLowering> {
  const spec = owner.spec;
  const trials: number[] = [];
  ctx.progress.stage(
    `${owner.outcome.name}: lowering`,
    `${failureHead(failure)}; lowering under ${underWhat(failure)}`,
  );
  const run = async (batch: number): Promise<TrialRecord> => {
    // As the confirmation runs: until memory flattens (at least confirm_steps, across its epochs).
    const warmupSteps = ctx.experiment.measure.warmup_steps;
    const measure =
      spec.confirm_steps > 0
        ? confirmationMeasure({
            warmupSteps,
            minSteps: spec.confirm_steps,
            maxSteps: spec.confirm_max_steps,
            epochs: spec.confirm_epochs,
          })
        : { warmupSteps, steps: spec.steps };
    const record = await runJournaledTrial(
      ctx,
      { stage: owner.outcome.name, role: 'lower', config: { ...config, [spec.param]: batch }, measure },
      { n: trials.length + 1, ofAbout: trials.length + 1, show: [spec.param, ...Object.keys(config)] },
    );
    trials.push(record.index);
    return record;
  };
  const low = await lowerFailed(ctx, spec, owner.outcome, { failed: failure.batch, run, budget: (max) => max });
  const s = low.held ? survival([low.held], spec.param) : undefined;
  return {
    failure,
    config,
    batch: low.held ? (low.held.config[spec.param] as number) : null,
    lowest_fail: low.lowestFail,
    trials,
    ...(s ? { survived: s } : {}),
    ...(low.band ? { band: low.band } : {}),
  };
}

/** The lowered batch replaces the stage's answer in the run's config, its outcome and the evidence. */
function setBatch(
  ctx: StageContext,
  owner: StageOutcomeOf<'max-batch'>,
  evidence: Record<string, Evidence>,
  l: StageLowering,
): void {
  const param = owner.result.param;
  const batch = l.batch!;
  owner.result.chosen = batch;
  owner.chosen[param] = batch;
  ctx.baseConfig[param] = batch;
  const e = evidence[param] ?? owner.evidence[param];
  if (!e) return;
  const lowered: Evidence = {
    ...e,
    rule: `${e.rule}; lowered from ${l.failure.batch} because ${
      l.failure.kind === 'every-config-oom'
        ? 'every config'
        : l.failure.kind === 'chosen-config-oom'
          ? 'the chosen config'
          : 'a config'
    } of stage ${l.failure.stage} OOMed at it`,
    trials: l.survived ? [l.survived.trial] : [],
  };
  evidence[param] = lowered;
  owner.evidence[param] = lowered;
}

/** A batch that failed is not written: it leaves the run's config, the stage's answer and the evidence. */
function dropBatch(
  ctx: StageContext,
  owner: StageOutcomeOf<'max-batch'>,
  evidence: Record<string, Evidence>,
  param: string,
): void {
  owner.result.chosen = null;
  delete ctx.baseConfig[param];
  delete owner.chosen[param];
  delete owner.evidence[param];
  delete evidence[param];
}
