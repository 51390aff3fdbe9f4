// Builds the protocol's environment for a configuration: TUNEBENCH_CONFIG plus one variable per parameter.
import type { Config } from '../../trial/record.js';
import type { MeasureSteps } from '../workload.js';
import { ENV, paramEnvName } from './events.js';

export function protocolEnv(config: Config, measure: MeasureSteps): Record<string, string> {
  const env: Record<string, string> = {
    [ENV.config]: JSON.stringify(config),
    [ENV.warmupSteps]: String(measure.warmupSteps),
    [ENV.steps]: String(measure.steps),
  };
  for (const [name, value] of Object.entries(config)) env[paramEnvName(name)] = String(value);
  return env;
}
