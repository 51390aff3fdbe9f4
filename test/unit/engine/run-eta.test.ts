// The whole run's ETA: this stage's rest and the later stages' planned trials at the mean trial's time.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createProgress } from '../../../harness/cli/progress.js';
import { plannedTrials } from '../../../harness/engine/kinds/index.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../support/paths.js';
import type { TrialRecord } from '../../../harness/domain/index.js';
import { loadExperiment } from '../../../harness/engine/load.js';

const record = (seconds: number) =>
  ({
    outcome: 'ok',
    wall_seconds: seconds,
    config: { batch_size: 8 },
    samples_per_second: 10,
  }) as unknown as TrialRecord;

describe('run ETA', () => {
  it("adds the later stages' planned trials at the mean trial's time", () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const p = createProgress('plain', out);
    p.plan!([
      { name: 'max-batch-1', trials: 10 },
      { name: 'sweep-1', trials: 20 },
    ]);
    p.stage('max-batch-1', 'max-batch');
    for (let n = 1; n <= 3; n++) {
      p.trialStart({
        stage: 'max-batch-1',
        n,
        ofAbout: 10,
        config: { batch_size: 8 },
        role: 'probe',
        show: ['batch_size'],
      });
      p.trialEnd(record(30));
    }
    p.finish();
    // After 3 trials of 30 s: 7 more here (210 s) and 20 in the sweep (600 s).
    assert.match(text.trim().split('\n').at(-1)!, /eta ~3m30s, run ~13m30s/);
  });

  it('plans trials from each stage kind', () => {
    const file = join(tempDir(), 'p.yaml');
    writeFileSync(
      file,
      `name: p
workload: { kind: onnx, model: { generate: mlp, input: 8, hidden: 8, layers: 1 } }
limits: { memory: 1GiB }
stages:
  - { kind: max-batch, repeat_boundary: 2, throughput_points: 4 }
  - { kind: sweep, params: { intra_op_threads: [1, 2], inter_op_threads: [1, 2] }, strategy: grid, repeats: 3 }
  - { kind: compare, param: arena, arms: [keep, off], repeats: 5 }
`,
    );
    const { experiment } = loadExperiment(file);
    assert.deepEqual(experiment.stages.map(plannedTrials), [10 + 1 + 4 + 4 + 1, 4 * 3, 2 * 5]);
  });
});
