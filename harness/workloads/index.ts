// Builds the workload an experiment names.
import { dirname } from 'node:path';
import type { Experiment } from '../experiment/schema.js';
import { CommandWorkload, type CommandSpec } from './command/workload.js';
import { OnnxWorkload } from './onnx/workload.js';
import type { Workload } from './workload.js';

export function createWorkload(experiment: Experiment, source: string): Workload {
  const spec = experiment.workload;
  if (spec.kind === 'command') return new CommandWorkload(spec as CommandSpec, dirname(source));
  return new OnnxWorkload(spec, experiment.seed);
}
