// Picks the executor an experiment (or --executor) names.
import type { Progress } from './progress.js';
import type { ExecutorSpec } from '../experiment/schema.js';
import type { TrialContext } from '../trial/run-trial.js';
import { localExecutor, type Executor } from './executor.js';
import { slurmExecutor } from './slurm/executor.js';

export function createExecutor(
  spec: ExecutorSpec,
  o: { runDir: string; experiment: string; trial: TrialContext; progress: Progress; noWait: boolean },
): Executor {
  if (spec.kind === 'local') return localExecutor(o.trial);
  return slurmExecutor({
    runDir: o.runDir,
    experiment: o.experiment,
    spec,
    progress: o.progress,
    signal: o.trial.signal,
    noWait: o.noWait,
  });
}
