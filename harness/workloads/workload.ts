// The interface every workload kind implements: how to start one trial of a configuration.
import type { Config } from '../trial/record.js';

export interface MeasureSteps {
  warmupSteps: number;
  steps: number;
}

export interface TrialCommand {
  argv: string[];
  env: Record<string, string>;
  cwd?: string;
  /** True when the program speaks the events protocol and exiting without steps is an error. */
  eventsRequired: boolean;
}

export interface Workload {
  readonly kind: string;
  /** One line for logs and reports, e.g. "onnx transformer(dim=64, ...)". */
  readonly description: string;
  /** Parameter values fixed by the experiment; a trial's config overrides them. */
  readonly fixedParams: Config;
  /** `argv` replaces the program and its arguments (templates included) where the workload allows it. */
  command(config: Config, measure: MeasureSteps, argv?: readonly string[]): TrialCommand;
}
