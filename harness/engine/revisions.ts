// The run's state between stages and the one reducer that changes it. A stage returns its outcome; the
// work after a stage (lowering a batch that a later stage failed at, the final confirmation) returns
// revisions of earlier outcomes. `revise` applies both and returns a new state: nothing else writes the
// config, the outcomes or the evidence of a run.
import type { Config, Evidence, FinalConfirmation, MaxFinal, StageFailure, StageLowering } from '../domain/index.js';
import type { Frozen } from '../util/frozen.js';
import type { StageOutcome, StageOutcomeOf } from '../experiment/schema.js';

/** What the stages have produced so far: the run's config, their outcomes, the evidence, the failures. */
export interface RunState {
  /** Fixed parameters plus the values the stages chose. */
  readonly config: Readonly<Config>;
  readonly outcomes: Frozen<StageOutcome[]>;
  readonly evidence: Frozen<Record<string, Evidence>>;
  /** Failures no lowering rescued. */
  readonly failures: Frozen<StageFailure[]>;
}

/** One change to the run's state. */
export type Revision =
  /** A stage finished: its outcome joins the run, its chosen values the config, its evidence the run's. */
  | { readonly kind: 'stage'; readonly outcome: Frozen<StageOutcome> }
  /**
   * A max-batch stage's batch changed after it ran: lowered (`because` is added to its evidence's rule and
   * `trials` are the evidence now), or removed (`batch` null) where nothing held.
   */
  | {
      readonly kind: 'batch';
      readonly stage: string;
      readonly batch: number | null;
      readonly because: string;
      readonly trials: readonly number[];
    }
  /** A max-batch stage's batch was lowered because a later stage failed at it. */
  | { readonly kind: 'lowering'; readonly stage: string; readonly lowering: StageLowering }
  /** What the final confirmation of a max-batch stage showed. */
  | { readonly kind: 'final-confirmation'; readonly stage: string; readonly confirmation: FinalConfirmation }
  /** The max against the written config. */
  | { readonly kind: 'max-final'; readonly stage: string; readonly maxFinal: MaxFinal }
  /** A failure no lowering rescued. */
  | { readonly kind: 'failure'; readonly failure: StageFailure };

/** The state before the first stage: the workload's fixed parameters. */
export function initialState(config: Readonly<Config>): RunState {
  return { config: { ...config }, outcomes: [], evidence: {}, failures: [] };
}

/** The state after `revisions`, in order; `state` itself is left as it was. */
export function revise(state: RunState, revisions: readonly Revision[]): RunState {
  return revisions.reduce(applyOne, state);
}

function applyOne(s: RunState, r: Revision): RunState {
  switch (r.kind) {
    case 'stage':
      return {
        ...s,
        outcomes: [...s.outcomes, r.outcome],
        config: { ...s.config, ...r.outcome.chosen },
        evidence: { ...s.evidence, ...r.outcome.evidence },
      };
    case 'batch':
      return reviseBatch(s, r);
    case 'lowering':
      return withMaxBatch(s, r.stage, (o) => ({
        ...o,
        result: { ...o.result, lowered_after: [...(o.result.lowered_after ?? []), r.lowering] },
      }));
    case 'final-confirmation':
      return withMaxBatch(s, r.stage, (o) => ({ ...o, result: { ...o.result, final_confirmation: r.confirmation } }));
    case 'max-final':
      return withMaxBatch(s, r.stage, (o) => ({ ...o, result: { ...o.result, max_final: r.maxFinal } }));
    case 'failure':
      return { ...s, failures: [...s.failures, r.failure] };
  }
}

/** The batch of a max-batch stage, lowered or removed, in its outcome, the run's config and the evidence. */
function reviseBatch(s: RunState, r: Extract<Revision, { kind: 'batch' }>): RunState {
  const owner = maxBatchOutcome(s, r.stage);
  const param = owner.result.param;
  const e = s.evidence[param] ?? owner.evidence[param];
  const lowered: Frozen<Evidence> | undefined = e && { ...e, rule: `${e.rule}; ${r.because}`, trials: [...r.trials] };
  const batch = r.batch;
  const config = (c: Readonly<Config>): Config => (batch === null ? without(c, param) : { ...c, [param]: batch });
  const evidence = (m: Frozen<Record<string, Evidence>>): Frozen<Record<string, Evidence>> =>
    batch === null || !lowered ? without(m, param) : { ...m, [param]: lowered };
  const revised = withMaxBatch(s, r.stage, (o) => ({
    ...o,
    result: { ...o.result, chosen: batch },
    chosen: config(o.chosen),
    evidence: evidence(o.evidence),
  }));
  return { ...revised, config: config(s.config), evidence: evidence(s.evidence) };
}

/** `m` without `key`. */
function without<T>(m: Readonly<Record<string, T>>, key: string): Record<string, T> {
  return Object.fromEntries(Object.entries(m).filter(([k]) => k !== key));
}

/** The outcome of stage `name`; a revision of a stage the run does not hold is a bug, not a run's failure. */
function outcomeNamed(s: RunState, name: string): Frozen<StageOutcome> {
  const o = s.outcomes.find((x) => x.name === name);
  if (!o) throw new Error(`a revision names stage ${name}, which has no outcome yet`);
  return o;
}

/** The outcome of max-batch stage `name` in a state; another kind or no such stage is a bug. */
export function maxBatchOutcome(s: RunState, name: string): Frozen<StageOutcomeOf<'max-batch'>> {
  const o = outcomeNamed(s, name);
  if (o.kind !== 'max-batch') throw new Error(`a revision of a max-batch stage names ${o.kind} stage ${name}`);
  return o;
}

function withOutcome(s: RunState, name: string, f: (o: Frozen<StageOutcome>) => Frozen<StageOutcome>): RunState {
  outcomeNamed(s, name);
  return { ...s, outcomes: s.outcomes.map((o) => (o.name === name ? f(o) : o)) };
}

function withMaxBatch(
  s: RunState,
  name: string,
  f: (o: Frozen<StageOutcomeOf<'max-batch'>>) => Frozen<StageOutcomeOf<'max-batch'>>,
): RunState {
  maxBatchOutcome(s, name);
  return withOutcome(s, name, (o) => (o.kind === 'max-batch' ? f(o) : o));
}
