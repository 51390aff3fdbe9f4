// The stage runners, one per stage kind: the compiler checks that the table covers every kind of
// the experiment schema and that each runner takes its kind's spec and returns its kind's result.
import type { StageSpec } from '../../experiment/schema.js';
import type { StageInput } from '../context.js';
import type { Frozen } from '../../util/frozen.js';
import { runClaimStage } from './claim.js';
import { runCompareStage } from './compare.js';
import { runMaxBatchStage } from './max-batch.js';
import { runSweepStage } from './sweep.js';
import type { StageKind, StageOutcome, StageOutcomeOf } from '../../experiment/schema.js';

type SpecOf = { [K in StageKind]: Extract<StageSpec, { kind: K }> };
type Runner<K extends StageKind> = (
  input: StageInput,
  spec: Frozen<SpecOf[K]>,
  name: string,
) => Promise<StageOutcomeOf<K>>;

export const STAGE_RUNNERS: { [K in StageKind]: Runner<K> } = {
  'max-batch': runMaxBatchStage,
  sweep: runSweepStage,
  compare: runCompareStage,
  claim: runClaimStage,
};

/** Runs one stage with the runner of its kind. */
export function runStage(input: StageInput, spec: Frozen<StageSpec>, name: string): Promise<StageOutcome> {
  // One case per kind: a kind added to the schema without a case here fails to compile (no return).
  switch (spec.kind) {
    case 'max-batch':
      return STAGE_RUNNERS['max-batch'](input, spec, name);
    case 'sweep':
      return STAGE_RUNNERS.sweep(input, spec, name);
    case 'compare':
      return STAGE_RUNNERS.compare(input, spec, name);
    case 'claim':
      return STAGE_RUNNERS.claim(input, spec, name);
  }
}
