// Checks of an experiment against the machine that runs its trials, made when a local run starts
// (validation cannot make them: a file is often validated on another machine than the one that runs it).
import { totalmem } from 'node:os';
import { ConfigError } from '../errors.js';
import type { Experiment } from './schema.js';
import { formatBytes } from './units.js';

/**
 * Refuses a limits.memory above this machine's memory when the trials run here: such a cap limits
 * nothing, and a prlimit that large makes every trial fail in ways that look like the workload's.
 */
export function refuseMemoryAboveMachine(experiment: Experiment, machineBytes = totalmem()): void {
  const cap = experiment.limits.memory;
  if (cap === undefined || experiment.executor.kind !== 'local' || cap <= machineBytes) return;
  throw new ConfigError(
    `limits.memory: ${cap} bytes (${formatBytes(cap)}) is more than this machine's memory, ` +
      `${machineBytes} bytes (${formatBytes(machineBytes)}), so it would cap nothing; ` +
      `give at most ${formatBytes(machineBytes)} (the cap for one trial), or leave limits.memory out`,
  );
}
