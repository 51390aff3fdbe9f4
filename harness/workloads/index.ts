// Builds the workload that an experiment's `workload` section names.
import { dirname } from 'node:path';
import { CommandWorkload, type CommandSpec } from './command/workload.js';
import type { OnnxWorkloadOptions } from './onnx/spec.js';
import { OnnxWorkload } from './onnx/workload.js';
import type { Workload } from './workload.js';

/** The workload section as experiment/ validated it: one of the kinds that workloads/ implements. */
export type WorkloadOptions = CommandSpec | OnnxWorkloadOptions;

/** `source`: the experiment file, whose folder relative command paths start from; `seed`: the run's seed. */
export function createWorkload(spec: WorkloadOptions, seed: number, source: string): Workload {
  if (spec.kind === 'command') return new CommandWorkload(spec, dirname(source));
  return new OnnxWorkload(spec, seed);
}
