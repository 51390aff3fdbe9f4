// The real worker-thread data pipeline inside ONNX trials: data-wait, inline loading, failing and hanging workers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { OnnxWorkload } from '../../harness/workloads/onnx/workload.js';
import { tempDir } from '../support/paths.js';
import type { Config } from '../../harness/domain/index.js';

function context(pipeline: Record<string, unknown>, timeout = 60): TrialContext {
  const workload = new OnnxWorkload(
    {
      kind: 'onnx',
      model: { generate: 'mlp', input: 512, hidden: 128, layers: 1 } as never,
      params: { intra_op_threads: 1, inter_op_threads: 1 },
      pipeline: pipeline as never,
    },
    1,
  );
  return { workload, limits: { memory: 3 * 2 ** 30, mechanism: 'prlimit', timeout }, scratchDir: tempDir() };
}

const run = (ctx: TrialContext, config: Config, steps = 8) =>
  runTrial(ctx, {
    index: 0,
    stage: 's',
    role: { kind: 'probe' },
    config: { batch_size: 64, ...config },
    measure: { warmupSteps: 1, steps },
  });

describe('data pipeline', () => {
  it('measures data-wait for every step, inline (num_workers 0) and with workers', async () => {
    for (const num_workers of [0, 2]) {
      const r = await run(context({ cost: 20, epochs: 2 }), { num_workers, prefetch_factor: 2 });
      assert.equal(r.outcome, 'ok', r.reason + r.stderr_tail);
      assert.equal(r.steps.length, 8);
      for (const s of r.steps) {
        assert.ok(typeof s.data_wait_seconds === 'number' && s.data_wait_seconds >= 0);
        assert.ok(s.data_wait_seconds <= s.seconds, 'waiting is part of the step');
      }
      const wait = r.steps.reduce((a, s) => a + s.data_wait_seconds!, 0);
      assert.ok(wait > 0, `num_workers ${num_workers}: some data-wait measured`);
    }
  });

  it('fails the trial as a crash with the worker message when a worker throws, without hanging', async () => {
    const started = Date.now();
    const r = await run(context({ cost: 1, epochs: 1, fault: { kind: 'throw', batch: 3 } }, 30), {
      num_workers: 2,
      prefetch_factor: 2,
    });
    assert.equal(r.outcome, 'crash');
    assert.match(r.reason, /data-loader worker failed on batch 3: injected fault/);
    assert.ok(Date.now() - started < 15_000, 'no hang');
  });

  it('fails inline loading the same way', async () => {
    const r = await run(context({ cost: 1, epochs: 1, fault: { kind: 'throw', batch: 2 } }), { num_workers: 0 });
    assert.equal(r.outcome, 'crash');
    assert.match(r.reason, /inline loader failed while preprocessing batch 2/);
  });

  it('cuts a hanging worker at the trial timeout', async () => {
    const r = await run(context({ cost: 1, epochs: 1, fault: { kind: 'hang', batch: 2 } }, 3), {
      num_workers: 1,
      prefetch_factor: 1,
    });
    assert.equal(r.outcome, 'timeout');
    assert.ok(r.steps.length >= 1, 'steps before the hang are kept');
  });
});
