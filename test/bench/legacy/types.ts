// Frozen copy of harness/trial/record.ts (StepSample, Config, Outcome; ParamValue from harness/experiment/schema.ts) at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Local stand-ins for the types the copies need, so that nothing outside this folder can break them.

export type ParamValue = number | string | boolean;

export type Outcome = 'ok' | 'oom' | 'timeout' | 'crash' | 'invalid';

export type Config = Record<string, ParamValue>;

export interface StepSample {
  samples: number;
  seconds: number;
  data_wait_seconds?: number;
}
