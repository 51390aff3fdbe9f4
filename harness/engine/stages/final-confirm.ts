// The final confirmation: before the chosen config is written, the batch that a max-batch stage chose
// runs as its confirmation does (until memory flattens, at least confirm_steps steps, in a fresh process)
// with the config of the whole run (the loader settings, precision
// and so on that later stages chose). A batch that survived with two workers' worth of memory less
// is not an answer for the training that follows; when it fails, the batch is lowered until one holds.
import { stageName } from '../../experiment/checks.js';
import type { Experiment, MaxBatchStageSpec } from '../../experiment/schema.js';
import type { Frozen } from '../../util/frozen.js';
import { stageInput, type RunContext, type StageInput } from '../context.js';
import { maxBatchOutcome, revise, type Revision, type RunState } from '../revisions.js';
import { survival } from './max-batch.js';
import { confirmationMeasure, growthPhrase, holds } from '../../search/confirmation.js';
import { lowerInBand } from '../../search/boundary-repeat.js';
import { bandRunsOf, type BandRun } from '../../search/band-model.js';
import { loweredHow } from '../../report/stage-failure.js';
import { maxFinalStatement } from '../../report/max-batch-blocks.js';
import {
  failureCause,
  stepCount,
  type Config,
  type FinalConfirmation,
  type MaxBatchSummary,
  type MaxFinal,
  type Role,
  type TrialRecord,
} from '../../domain/index.js';
import type { StageOutcomeOf } from '../../experiment/schema.js';

/** Lowering steps by this factor until a batch holds, then bisects between it and the lowest failure. */
const LOWER_FACTOR = 0.85;
/** The role of a final confirmation's trials. */
const FINAL_CONFIRM: Role = { kind: 'final-confirm' };
/** Trials the lowering may spend before it gives up. */
export const MAX_LOWERING_TRIALS = 8;
/** Trials a lowering inside a measured band may spend: each batch it places runs repeat_boundary + 1 times. */
export const MAX_BAND_LOWERING_TRIALS = 12;

/**
 * Runs the final confirmation of every max-batch stage whose chosen batch is still in the final
 * config and has not yet survived a confirmation-length run with exactly that config. Returns the run's
 * state with each stage's confirmation, its lowered batch and its max against the final config.
 */
export async function finalConfirmations(run: RunContext, start: RunState): Promise<RunState> {
  let state = start;
  for (const { name } of start.outcomes) {
    const outcome = state.outcomes.find((o) => o.name === name);
    if (outcome?.kind !== 'max-batch') continue;
    const spec = maxBatchSpec(run.experiment, outcome.name);
    if (!spec) continue;
    state = revise(state, await confirmChosen(stageInput(run, state), spec, outcome));
    const maxFinal = maxAgainstFinal(run.trials.records, outcome.result, state.config, spec);
    if (maxFinal) {
      const revised = revise(state, [{ kind: 'max-final', stage: name, maxFinal }]);
      state = revised;
      run.progress.note(maxFinalStatement(maxBatchOutcome(revised, name).result));
    }
  }
  return state;
}

/**
 * The max against the written config: which settings later stages changed from the ones the max was found
 * with, and whether the max itself ran with them (a confirmation-length pass, or an OOM). Undefined when
 * nothing it ran with changed.
 */
export function maxAgainstFinal(
  records: readonly TrialRecord[],
  r: Frozen<MaxBatchSummary>,
  final: Config,
  spec: Pick<MaxBatchStageSpec, 'param' | 'confirm_steps'>,
): MaxFinal | undefined {
  const { param } = spec;
  if (r.max === null) return undefined;
  const foundWith = r.survived.max?.config;
  if (!foundWith) return undefined;
  const keys = Object.keys(final).filter((k) => k !== param && foundWith[k] !== final[k]);
  if (keys.length === 0) return undefined;
  const target: Config = { ...final, [param]: r.max };
  const failed = oomWith(records, target);
  const held = records.find(
    (t) => t.outcome === 'ok' && stepCount(t.steps) >= Math.max(1, spec.confirm_steps) && sameConfig(t.config, target),
  );
  const pick = (c: Config) => Object.fromEntries(keys.filter((k) => k in c).map((k) => [k, c[k]!]));
  return {
    max: r.max,
    found_with: pick(foundWith),
    written: pick(final),
    outcome: failed ? 'failed' : held ? 'confirmed' : 'not-measured',
    trial: (failed ?? held)?.index ?? null,
  };
}

/** The final confirmation of one max-batch stage's chosen batch (see finalConfirmations), as revisions. */
async function confirmChosen(
  input: StageInput,
  spec: Frozen<MaxBatchStageSpec>,
  outcome: Frozen<StageOutcomeOf<'max-batch'>>,
): Promise<Revision[]> {
  const summary = outcome.result;
  if (spec.final_confirm === 'off' || spec.confirm_steps <= 0 || summary.chosen === null) return [];
  const param = spec.param;
  // A later stage that set the batch itself (a sweep of batch_size) owns it now.
  if (input.baseConfig[param] !== summary.chosen) return [];
  const final: Config = { ...input.baseConfig };
  const records = input.trials.records;
  const mine = records.filter((r) => r.stage === outcome.name);
  // The final config ran out of memory somewhere in the run (a later stage's trial): that is a failed run of
  // it, whatever else passed. Only where none did may a confirmation-length pass stand for the final one.
  const failedBefore = oomWith(records, final);
  if (
    !failedBefore &&
    mine.some((r) => r.outcome === 'ok' && stepCount(r.steps) >= spec.confirm_steps && sameConfig(r.config, final))
  )
    return [];
  const ranWith = mine.find((r) => r.config[param] === summary.chosen)?.config ?? {};
  const changed = Object.fromEntries(Object.entries(final).filter(([k, v]) => k !== param && ranWith[k] !== v));
  const result = await confirmOrLower(input, spec, outcome, final, changed, failedBefore);
  input.progress.note(result.statement);
  const stage = outcome.name;
  const revisions: Revision[] = [{ kind: 'final-confirmation', stage, confirmation: result }];
  if (result.batch !== summary.chosen)
    revisions.push({
      kind: 'batch',
      stage,
      batch: result.batch,
      because: `lowered from ${result.from} by the final confirmation with the final config`,
      trials: result.survived ? [result.survived.trial] : [],
    });
  return revisions;
}

/** The spec of the max-batch stage named `name`. */
export function maxBatchSpec(experiment: Frozen<Experiment>, name: string): Frozen<MaxBatchStageSpec> | undefined {
  return experiment.stages.find(
    (s, i): s is Frozen<MaxBatchStageSpec> => s.kind === 'max-batch' && stageName(s, i) === name,
  );
}

/** One confirmation-length run at `batch` with `final`; on failure, lower the batch until a run holds. */
async function confirmOrLower(
  input: StageInput,
  spec: Frozen<MaxBatchStageSpec>,
  owner: Frozen<StageOutcomeOf<'max-batch'>>,
  final: Config,
  changed: Config,
  failedBefore: TrialRecord | undefined,
): Promise<FinalConfirmation> {
  const stage = owner.name;
  const from = owner.result.chosen!;
  const trials: number[] = [];
  let n = 0;
  const run = async (batch: number): Promise<TrialRecord> => {
    n += 1;
    const measure = confirmationMeasure({
      warmupSteps: input.experiment.measure.warmup_steps,
      minSteps: spec.confirm_steps,
      maxSteps: spec.confirm_max_steps,
      epochs: spec.confirm_epochs,
    });
    const trial = { stage, role: FINAL_CONFIRM, config: { ...final, [spec.param]: batch }, measure };
    const record = await input.trials.run(trial, {
      n,
      ofAbout: n,
      show: [spec.param, ...Object.keys(changed)],
    });
    trials.push(record.index);
    return record;
  };
  input.progress.stage(
    `${stage}: final confirmation`,
    `${spec.param}=${from} until its memory flattens (at least ${spec.confirm_steps} steps) with the final config`,
  );
  const what =
    Object.keys(changed).length > 0
      ? `with the final config (${Object.entries(changed)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(', ')} chosen after the search)`
      : 'with the final config';
  let first = failedBefore ?? (await run(from));
  // A timeout says nothing about memory: the confirmation runs again, once; it is never lowered for one.
  if (first.outcome === 'timeout' && failedBefore === undefined) first = await run(from);
  if (first.outcome === 'ok') {
    const s = survival([first], spec.param)!;
    const g = first.memory_growth;
    // It ran, but a run that ended with memory still growing does not show that the batch holds.
    const proof = g ? (holds(g) ? `, ${growthPhrase(g)}` : `, but ${growthPhrase(g)}: not proven to hold`) : '';
    return {
      changed,
      from,
      batch: from,
      outcome: 'ok',
      trials,
      survived: s,
      statement: `${spec.param}=${from} ${s.statement}${proof}: ${!g || holds(g) ? 'confirmed' : 'ran'} ${what}`,
    };
  }
  if (first.outcome !== 'oom') {
    return {
      changed,
      from,
      batch: from,
      outcome: 'failed',
      trials,
      statement:
        `${spec.param}=${from} failed its final confirmation ${what} (${first.outcome}: ${failureCause(first)}); ` +
        `it is kept, but the training may fail the same way: see trial ${first.index}`,
    };
  }
  const failedWhere = failedBefore
    ? `ran out of memory ${what} in trial ${failedBefore.index} of stage ${failedBefore.stage}`
    : `ran out of memory in its final confirmation ${what} (${first.outcome})`;
  const low = await lowerFailed(input, spec, owner, { failed: from, run, budget: (n) => n - trials.length });
  if (!low.held) {
    return {
      changed,
      from,
      batch: null,
      outcome: 'failed',
      trials,
      statement:
        `${spec.param}=${from} ${failedWhere}, and no smaller batch held within ${trials.length} trials; ` +
        `no ${spec.param} is written`,
    };
  }
  const s = survival([low.held], spec.param)!;
  return {
    changed,
    from,
    batch: low.held.config[spec.param] as number,
    outcome: 'lowered',
    trials,
    survived: s,
    statement: `${spec.param}=${from} ${failedWhere}; lowered to ${String(low.held.config[spec.param])}${finalLoweredHow(low, trials.length)}, which ${s.statement}`,
  };
}

/** How the final confirmation's lowering placed its batch, for the sentence after "lowered to 176". */
function finalLoweredHow(low: LoweredBatch, trials: number): string {
  if (low.band) return ` ${loweredHow({ lowest_fail: low.lowestFail, band: low.band })}`;
  return low.exact ? ` (${low.lowestFail} failed)` : ` (not exact: the lowering stopped after ${trials} trials)`;
}

/** A lowering's answer, with how the band model placed it when the stage measured a band. */
export interface LoweredBatch extends Lowered {
  band?: { repeats: number; risk?: number; unexplained?: number[] };
}

/**
 * Lowers a batch of a max-batch stage that failed after the search. Where the stage measured its band
 * (repeat_boundary), the failure joins the band's runs and the model places the lowered batch, which must pass
 * repeat_boundary + 1 runs (search/boundary-repeat.ts lowerInBand); else geometric steps and bisection
 * (lowerBelow), where one pass holds.
 */
export async function lowerFailed(
  input: StageInput,
  spec: Frozen<MaxBatchStageSpec>,
  owner: Frozen<StageOutcomeOf<'max-batch'>>,
  o: { failed: number; run: (batch: number) => Promise<TrialRecord>; budget: (max: number) => number },
): Promise<LoweredBatch> {
  const band = owner.result.band;
  if (!band?.runs || band.repeats <= 0) {
    return lowerBelow({ m: spec.multiple_of, failed: o.failed, budget: o.budget(MAX_LOWERING_TRIALS), run: o.run });
  }
  let last: TrialRecord | undefined;
  const low = await lowerInBand({
    run: async (batch) => {
      last = await o.run(batch);
      return last.outcome === 'ok';
    },
    m: spec.multiple_of,
    failed: o.failed,
    known: bandEvidence(input, owner),
    repeats: band.repeats,
    maxRisk: band.model?.max_risk ?? spec.max_risk,
    budget: o.budget(MAX_BAND_LOWERING_TRIALS),
  });
  for (const line of low.log) input.progress.note(`${owner.name}: ${line}`);
  const held = low.batch !== null && last?.config[spec.param] === low.batch ? last : undefined;
  return {
    held,
    lowestFail: low.lowestFail,
    exact: false,
    band: {
      repeats: band.repeats,
      ...(low.risk !== undefined ? { risk: low.risk } : {}),
      ...(low.unexplained ? { unexplained: low.unexplained } : {}),
    },
  };
}

/**
 * The band's evidence as it stands: the stage's runs of confirmation length, and every OOM or pass of the
 * lowerings and final confirmations made since (a later failure is a run of the band too).
 */
function bandEvidence(input: StageInput, owner: Frozen<StageOutcomeOf<'max-batch'>>): BandRun[] {
  const param = owner.result.param;
  const runs: BandRun[] = bandRunsOf(owner.result.band?.runs ?? []);
  const add = (index: number) => {
    const r = input.trials.records[index];
    const batch = r?.config[param];
    if (r && (r.outcome === 'ok' || r.outcome === 'oom') && typeof batch === 'number')
      runs.push({ batch, ok: r.outcome === 'ok' });
  };
  for (const l of owner.result.lowered_after ?? []) {
    runs.push({ batch: l.failure.batch, ok: false });
    l.trials.forEach(add);
  }
  (owner.result.final_confirmation?.trials ?? []).forEach(add);
  return runs;
}

/** What lowering a batch that failed found: the largest batch that held, and the lowest that failed. */
export interface Lowered {
  held: TrialRecord | undefined;
  lowestFail: number;
  /** The held batch is one multiple below the lowest failure. */
  exact: boolean;
}

/**
 * Lowers a batch that failed: geometrically (x0.85) until a batch holds, then bisects between it and the
 * lowest failure, within `budget` trials.
 */
export async function lowerBelow(o: {
  m: number;
  failed: number;
  budget: number;
  run: (batch: number) => Promise<TrialRecord>;
}): Promise<Lowered> {
  let hi = Math.floor(o.failed / o.m);
  let lo = 0;
  let held: TrialRecord | undefined;
  for (let n = 0; hi - lo > 1 && n < o.budget; n++) {
    const k = lo === 0 ? Math.max(1, Math.min(hi - 1, Math.floor(hi * LOWER_FACTOR))) : Math.floor((lo + hi) / 2);
    const r = await o.run(k * o.m);
    if (r.outcome === 'ok') {
      lo = k;
      held = r;
    } else {
      hi = k;
    }
  }
  return { held, lowestFail: hi * o.m, exact: held !== undefined && hi - lo <= 1 };
}

/** The first trial of the run that ran out of memory with exactly `config`. */
export function oomWith(records: readonly TrialRecord[], config: Config): TrialRecord | undefined {
  return records.find((r) => r.outcome === 'oom' && sameConfig(r.config, config));
}

export function sameConfig(a: Config, b: Config): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}
