// Transitional: the trial record lives in harness/domain/trial.ts.
export { OUTCOMES, type Config, type LimitMechanism, type Outcome, type StepSample, type TrialRecord } from '../domain/index.js';
