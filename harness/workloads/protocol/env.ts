// Builds the protocol's environment for a configuration: TUNEBENCH_CONFIG plus one variable per parameter.
import type { MeasureSteps } from '../workload.js';
import { ENV, paramEnvName } from './events.js';
import type { Config } from '../../domain/index.js';

/** The configuration's variables alone: TUNEBENCH_CONFIG and TUNEBENCH_<NAME> for each parameter. */
export function configEnv(config: Config): Record<string, string> {
  const env: Record<string, string> = { [ENV.config]: JSON.stringify(config) };
  for (const [name, value] of Object.entries(config)) env[paramEnvName(name)] = String(value);
  return env;
}

export function protocolEnv(config: Config, measure: MeasureSteps): Record<string, string> {
  return {
    ...configEnv(config),
    [ENV.warmupSteps]: String(measure.warmupSteps),
    [ENV.steps]: String(measure.steps),
    ...(measure.epochs !== undefined ? { [ENV.trialEpochs]: String(measure.epochs) } : {}),
  };
}
