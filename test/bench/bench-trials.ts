// The real trials of bench:max-batch: an experiment's max-batch stage, its workload and a function that
// runs one journal-less trial at a batch size, as the experiment runs it (forked from a warm server under
// `warm_start: fork`, except where run-trial.ts starts the role afresh).
import { join } from 'node:path';
import type { RoleKind, TrialRecord } from '../../harness/domain/index.js';
import type { MeasureSteps } from '../../harness/workloads/workload.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { WarmPool } from '../../harness/trial/warm-pool.js';
import { createWorkload } from '../../harness/workloads/index.js';
import { ROOT, tempDir } from '../support/paths.js';
import { loadExperiment } from '../../harness/engine/load.js';

export function benchTrials(experimentPath: string) {
  const { experiment, source } = loadExperiment(join(ROOT, experimentPath));
  const stage = experiment.stages[0]!;
  if (stage.kind !== 'max-batch') throw new Error(`${experimentPath}: the first stage must be max-batch`);
  const workload = createWorkload(experiment.workload, experiment.seed, source);
  const scratch = tempDir('tunebench-bench-');
  const warm =
    experiment.workload.kind === 'command' && experiment.workload.warm_start === 'fork'
      ? new WarmPool(experiment.limits.timeout)
      : undefined;
  let index = 0;
  const trial = (batch: number, role: RoleKind, measure: MeasureSteps): Promise<TrialRecord> =>
    runTrial(
      { workload, limits: experiment.limits, scratchDir: scratch, ...(warm ? { warm } : {}) },
      { index: index++, stage: 'bench', role: { kind: role }, config: { batch_size: batch }, measure },
    );
  return {
    experiment,
    stage: stage,
    workload,
    warm: warm !== undefined,
    trial,
    close: () => warm?.close(),
  };
}
