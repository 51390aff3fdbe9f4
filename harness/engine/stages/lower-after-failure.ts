// A later stage that fails at the batch an earlier max-batch stage chose (every config of a loader sweep
// ran out of memory at it, a compare whose baseline did cannot compare, or the config a stage chose did in
// some of its trials) is the answer failing, not the workload: the batch is lowered and the stage runs
// again at it. The lowering runs under the sweep's cheapest config (every config failed) or the config that
// failed, each run as the confirmation runs (until memory flattens); where the max-batch stage measured its
// band, the failure joins the band's runs and the band model places the lowered batch, which passes
// repeat_boundary + 1 runs (else one run holds). A batch that failed is never left in the config: when
// nothing lower holds, the batch is removed and the run reports the failure (exit 1).
import type { MaxBatchStageSpec, StageSpec } from '../../experiment/schema.js';
import { configKey } from '../../search/space.js';
import type { StageInput } from '../context.js';
import type { Frozen } from '../../util/frozen.js';
import { revise, type Revision, type RunState } from '../revisions.js';
import { lowerFailed, maxBatchSpec, sameConfig } from './final-confirm.js';
import { failureHead, underWhat } from '../../report/stage-failure.js';
import { survival } from './max-batch.js';
import { confirmationMeasure } from '../../search/confirmation.js';
import type { Config, StageFailure, StageLowering, StageNote, TrialRecord } from '../../domain/index.js';
import type { StageKind, StageOutcome, StageOutcomeOf } from '../../experiment/schema.js';
import type { SpecOf } from '../../experiment/kinds.js';

/** Times a stage runs again at a lower batch before the run gives up on it. */
const MAX_RETRIES = 2;

export interface FailedStageRun {
  spec: Frozen<StageSpec>;
  name: string;
  /** Runs the stage again from `state` (the run's state with the lowered batch). */
  rerun: (state: RunState) => Promise<StageOutcome>;
  /** How each stage kind's trials fail at a batch (its module's failureAtBatch). */
  kinds: FailureKinds;
}

/** What the lowering needs of each stage kind's module. */
export type FailureKinds = { readonly [K in StageKind]: { failureAtBatch: FailureAtBatch<K> } };
interface FailureAtBatch<K extends StageKind> {
  groups: (outcome: Frozen<StageOutcomeOf<K>>, records: readonly TrialRecord[]) => TrialRecord[][];
  wholeConfigs: boolean;
  lightest: (outcome: Frozen<StageOutcomeOf<K>>, spec: Frozen<SpecOf<K>>) => Config | null;
}

function failureOfKind<K extends StageKind>(kinds: FailureKinds, kind: K): FailureAtBatch<K> {
  return kinds[kind].failureAtBatch;
}

/**
 * Runs `first` through the lowering: while every config of the stage OOMed at the chosen batch, lowers
 * the batch and runs the stage again. Returns the last outcome and the revisions of the run's state that
 * the lowering made (the failure among them when no lower batch rescued the stage); `input` is the stage's
 * own, from the state before it.
 */
export async function lowerAfterFailure(
  input: StageInput,
  first: StageOutcome,
  x: FailedStageRun,
): Promise<{ outcome: Frozen<StageOutcome>; revisions: Revision[] }> {
  let outcome = first;
  let state: RunState = { config: input.baseConfig, outcomes: input.outcomes, evidence: {}, failures: [] };
  const revisions: Revision[] = [];
  for (let attempt = 0; ; attempt++) {
    const owner = ownerOfBatch(input, state);
    const failure = owner ? failureAtBatch(x.kinds, input.trials.records, state.config, outcome, owner) : undefined;
    if (!owner || !failure) return { outcome, revisions };
    const stage = owner.outcome.name;
    if (attempt === MAX_RETRIES) {
      revisions.push(dropBatch(stage), { kind: 'failure', failure });
      return { outcome, revisions };
    }
    const lowering = await lowerUnder(
      input,
      owner,
      failure,
      loweringConfig(x.kinds, input, state.config, outcome, x.spec, failure),
    );
    const note: StageNote = { kind: 'batch-lowered', param: owner.spec.param, lowering };
    if (lowering.batch === null) {
      revisions.push({ kind: 'lowering', stage, lowering }, dropBatch(stage), { kind: 'failure', failure });
      return { outcome: { ...outcome, notes: [note, ...outcome.notes] }, revisions };
    }
    const step: Revision[] = [{ kind: 'lowering', stage, lowering }, setBatch(lowering, owner.outcome.name)];
    revisions.push(...step);
    state = revise(state, step);
    input.progress.stage(x.name, `${x.spec.kind} again, at the lowered ${owner.spec.param}=${lowering.batch}`);
    outcome = await x.rerun(state);
    outcome = { ...outcome, notes: [note, ...outcome.notes] };
  }
}

interface Owner {
  outcome: Frozen<StageOutcomeOf<'max-batch'>>;
  spec: Frozen<MaxBatchStageSpec>;
}

/** The max-batch stage whose chosen batch the run still uses. */
function ownerOfBatch(input: StageInput, state: RunState): Owner | undefined {
  for (const o of [...state.outcomes].reverse()) {
    if (o.kind !== 'max-batch' || o.result.chosen === null) continue;
    const spec = maxBatchSpec(input.experiment, o.name);
    if (spec && state.config[spec.param] === o.result.chosen) return { outcome: o, spec };
  }
  return undefined;
}

/**
 * The failure at the owner's batch, if any: chosen-config-oom when the config the stage chose had an OOM
 * there; else, when the stage chose nothing and a config it ran had one, every-config-oom where each config
 * did (a sweep: every config that was not pruned; another stage: every trial failed, some by OOM), else
 * oom-at-batch (a compare whose baseline OOMed cannot compare).
 */
export function failureAtBatch(
  kinds: FailureKinds,
  records: readonly TrialRecord[],
  config: Readonly<Config>,
  outcome: Frozen<StageOutcome>,
  owner: Owner,
): StageFailure | undefined {
  const param = owner.spec.param;
  const batch = owner.outcome.result.chosen!;
  const oomAt = (t: TrialRecord) => t.outcome === 'oom' && t.config[param] === batch;
  if (Object.keys(outcome.chosen).length > 0) {
    // The stage chose a config that ran out of memory at the batch (a compare's arm that passed some rounds):
    // its choice was measured at a batch the run cannot write.
    const chosen = { ...config, ...outcome.chosen };
    const mine = records.filter((r) => r.stage === outcome.name && sameConfig(r.config, chosen));
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
  const kind = failureOfKind(kinds, outcome.kind);
  const groups = groupsOf(kind, outcome, records);
  const failed = groups.filter((g) => g.some(oomAt));
  if (failed.length === 0) return undefined;
  const every =
    failed.length === groups.length && (kind.wholeConfigs || groups.every((g) => !g.some((t) => t.outcome === 'ok')));
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

/** The stage's trials grouped by the config they ran, by its kind's rule. */
function groupsOf<K extends StageKind>(
  kind: FailureAtBatch<K>,
  outcome: Frozen<StageOutcomeOf<K>>,
  records: readonly TrialRecord[],
): TrialRecord[][] {
  return kind.groups(outcome, records);
}

/** A stage's trials grouped by the config they ran: what every kind but the sweep (whose rows are its configs) uses. */
export function groupsByConfig(outcome: Frozen<StageOutcome>, records: readonly TrialRecord[]): TrialRecord[][] {
  const mine = records.filter((r) => r.stage === outcome.name);
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
function loweringConfig(
  kinds: FailureKinds,
  input: StageInput,
  config: Readonly<Config>,
  outcome: Frozen<StageOutcome>,
  spec: Frozen<StageSpec>,
  failure: StageFailure,
): Config {
  if (failure.kind !== 'every-config-oom') {
    const first = input.trials.records.find(
      (r) =>
        r.stage === outcome.name &&
        r.outcome === 'oom' &&
        r.config[failure.param] === failure.batch &&
        Object.entries(failure.chosen ?? {}).every(([k, v]) => r.config[k] === v),
    );
    if (first) return Object.fromEntries(Object.entries(first.config).filter(([k]) => k !== failure.param));
  }
  return { ...config, ...(lightestOf(kinds, outcome.kind, outcome, spec) ?? {}) };
}

/** The kind's lightest config of a stage whose every config failed (its spec is of the same kind). */
function lightestOf<K extends StageKind>(
  kinds: FailureKinds,
  kind: K,
  outcome: Frozen<StageOutcomeOf<K>>,
  spec: Frozen<StageSpec>,
): Config | null {
  return spec.kind === kind ? kinds[kind].failureAtBatch.lightest(outcome, spec as Frozen<SpecOf<K>>) : null;
}

/** Lowers below the failed batch with `config`, each run as the owner's confirmation runs: until memory flattens. */
async function lowerUnder(
  input: StageInput,
  owner: Owner,
  failure: StageFailure,
  config: Config,
): Promise<StageLowering> {
  const spec = owner.spec;
  const trials: number[] = [];
  input.progress.stage(
    `${owner.outcome.name}: lowering`,
    `${failureHead(failure)}; lowering under ${underWhat(failure)}`,
  );
  const run = async (batch: number): Promise<TrialRecord> => {
    // As the confirmation runs: until memory flattens (at least confirm_steps, across its epochs).
    const warmupSteps = input.experiment.measure.warmup_steps;
    const measure =
      spec.confirm_steps > 0
        ? confirmationMeasure({
            warmupSteps,
            minSteps: spec.confirm_steps,
            maxSteps: spec.confirm_max_steps,
            epochs: spec.confirm_epochs,
          })
        : { warmupSteps, steps: spec.steps };
    const record = await input.trials.run(
      { stage: owner.outcome.name, role: { kind: 'lower' }, config: { ...config, [spec.param]: batch }, measure },
      { n: trials.length + 1, ofAbout: trials.length + 1, show: [spec.param, ...Object.keys(config)] },
    );
    trials.push(record.index);
    return record;
  };
  const low = await lowerFailed(input, spec, owner.outcome, { failed: failure.batch, run, budget: (max) => max });
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
function setBatch(l: StageLowering, stage: string): Revision {
  const f = l.failure;
  const which =
    f.kind === 'every-config-oom' ? 'every config' : f.kind === 'chosen-config-oom' ? 'the chosen config' : 'a config';
  return {
    kind: 'batch',
    stage,
    batch: l.batch,
    because: `lowered from ${f.batch} because ${which} of stage ${f.stage} OOMed at it`,
    trials: l.survived ? [l.survived.trial] : [],
  };
}

/** A batch that failed is not written: it leaves the run's config, the stage's answer and the evidence. */
function dropBatch(stage: string): Revision {
  return { kind: 'batch', stage, batch: null, because: 'removed', trials: [] };
}
