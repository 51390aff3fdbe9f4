// Every stage kind's module, one entry per kind: the compiler checks that each kind has one and that
// each module is whole (types.ts). The engine, the history, the loader (load.ts) and the reports read
// a kind's behaviour here, never by comparing kind names.
import type { TrialRecord } from '../../domain/index.js';
import type { SpecOf } from '../../experiment/kinds.js';
import type { StageKind, StageOutcome, StageOutcomeOf, StageSpec } from '../../experiment/schema.js';
import type { Frozen } from '../../util/frozen.js';
import type { StageInput } from '../context.js';
import { claimKind } from './claim.js';
import { compareKind } from './compare.js';
import { maxBatchKind } from './max-batch.js';
import { sweepKind } from './sweep.js';
import type { StageKindModules } from './types.js';

export const STAGE_KIND_MODULES: StageKindModules = {
  'max-batch': maxBatchKind,
  sweep: sweepKind,
  compare: compareKind,
  claim: claimKind,
};

/** Runs one stage with the runner of its kind. */
export function runStage(input: StageInput, spec: Frozen<StageSpec>, name: string): Promise<StageOutcome> {
  return runOfKind(spec.kind, input, spec, name);
}

// Of one kind, the outcome of that kind; the overload states what the compiler cannot follow through K.
function runOfKind<K extends StageKind>(
  kind: K,
  input: StageInput,
  spec: Frozen<SpecOf<K>>,
  name: string,
): Promise<OutcomeOf<K>>;
function runOfKind<K extends StageKind>(
  kind: K,
  input: StageInput,
  spec: Frozen<SpecOf<K>>,
  name: string,
): Promise<StageOutcomeOf<K>> {
  return STAGE_KIND_MODULES[kind].run(input, spec, name);
}

/** A kind's outcome; of a union of kinds, the union of their outcomes (StageOutcome). */
type OutcomeOf<K extends StageKind> = K extends StageKind ? StageOutcomeOf<K> : never;

/**
 * About how many trials each stage of an experiment runs, from its spec alone: what the progress line's
 * whole-run ETA multiplies by the trials' measured time.
 */
export function plannedTrials(spec: StageSpec): number {
  return plannedOfKind(spec.kind, spec);
}

function plannedOfKind<K extends StageKind>(kind: K, spec: SpecOf<K>): number {
  return STAGE_KIND_MODULES[kind].plannedTrials(spec);
}

/**
 * Whether a stage failed: by its kind's rule (a max batch whose workload broke or that nothing fits, a
 * sweep that chose nothing while configs failed), or every trial of it failed (a compare whose arms all
 * crashed). The run ends there, exit 2.
 */
export function stageFailed(o: Frozen<StageOutcome>, records: readonly TrialRecord[]): boolean {
  if (failedOfKind(o.kind, o)) return true;
  const mine = records.filter((t) => t.stage === o.name);
  return mine.length > 0 && !mine.some((t) => t.outcome === 'ok');
}

function failedOfKind<K extends StageKind>(kind: K, o: Frozen<StageOutcomeOf<K>>): boolean {
  return STAGE_KIND_MODULES[kind].failed(o);
}
