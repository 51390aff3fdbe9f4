// Real ONNX Runtime children under a real memory cap: ok below the limit, oom above it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { OnnxWorkload } from '../../harness/workloads/onnx/workload.js';
import { tempDir } from '../support/paths.js';

const CAP = 2.5 * 2 ** 30;

function context(model: Record<string, unknown>, params: Record<string, unknown> = {}): TrialContext {
  const workload = new OnnxWorkload(
    { kind: 'onnx', model: model as never, params: { intra_op_threads: 2, ...params } },
    1,
  );
  return { workload, limits: { memory: CAP, mechanism: 'prlimit', timeout: 60 }, scratchDir: tempDir() };
}

const measure = { warmupSteps: 1, steps: 2 };

describe('ONNX Runtime trials under a cap', () => {
  it('runs a small batch and records steps, throughput and memory', async () => {
    const r = await runTrial(context({ generate: 'mlp', hidden: 64 }), {
      index: 0,
      stage: 's',
      role: { kind: 'probe' },
      config: { batch_size: 32 },
      measure,
    });
    assert.equal(r.outcome, 'ok', r.reason + r.stderr_tail);
    assert.equal(r.steps.length, 2);
    assert.equal(r.warmup_steps, 1);
    assert.ok(r.samples_per_second! > 0);
    assert.ok(r.peak_rss_bytes! > 10e6);
    assert.ok(r.peak_limited_bytes! > r.peak_rss_bytes!, 'address space exceeds resident memory');
    assert.deepEqual({ mechanism: r.limit.mechanism, bytes: r.limit.bytes }, { mechanism: 'prlimit-as', bytes: CAP });
    assert.equal(r.config['intra_op_threads'], 2, 'fixed parameters are part of the config');
  });

  it('records a real out-of-memory failure as oom with the runtime message', async () => {
    const r = await runTrial(context({ generate: 'transformer' }), {
      index: 1,
      stage: 's',
      role: { kind: 'probe' },
      config: { batch_size: 20_000 },
      measure,
    });
    assert.equal(r.outcome, 'oom', r.reason);
    assert.match(`${r.reason}\n${r.stderr_tail}`, /Failed to allocate memory|allocation failed|out of memory/i);
    assert.equal(r.samples_per_second, null);
  });

  it('kills a real ONNX Runtime child at the timeout', async () => {
    const ctx = context({ generate: 'transformer' });
    ctx.limits = { ...ctx.limits, timeout: 1.5 };
    const started = Date.now();
    const r = await runTrial(ctx, {
      index: 3,
      stage: 's',
      role: { kind: 'probe' },
      config: { batch_size: 2048 },
      measure: { warmupSteps: 0, steps: 1000 },
    });
    assert.equal(r.outcome, 'timeout');
    assert.ok(Date.now() - started < 8000);
    assert.ok(r.steps.length > 0 && r.steps.length < 1000, 'steps before the kill are kept');
  });

  it('refuses arena shrink-every-run, which onnxruntime-node cannot pass on', async () => {
    const r = await runTrial(context({ generate: 'mlp' }, { arena: 'shrink-every-run' }), {
      index: 4,
      stage: 's',
      role: { kind: 'probe' },
      config: { batch_size: 4 },
      measure,
    });
    assert.equal(r.outcome, 'invalid');
    assert.match(r.reason, /enable_memory_arena_shrinkage/);
  });

  it('runs every generated model kind and the arena policies it can apply', async () => {
    for (const [model, arena] of [
      [{ generate: 'conv', size: 16 }, 'off'],
      [{ generate: 'transformer', seq: 16 }, 'keep'],
      [{ generate: 'mlp' }, 'off'],
    ] as const) {
      const r = await runTrial(context(model, { arena }), {
        index: 2,
        stage: 's',
        role: { kind: 'probe' },
        config: { batch_size: 4 },
        measure,
      });
      assert.equal(r.outcome, 'ok', `${JSON.stringify(model)} ${arena}: ${r.reason} ${r.stderr_tail}`);
    }
  });
});

describe('a user-supplied ONNX file', () => {
  it('runs with its own input names and a symbolic batch dimension of any name', async () => {
    const { generate } = await import('../../harness/workloads/onnx/models/index.js');
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const path = join(tempDir(), 'user-model.onnx');
    writeFileSync(path, generate({ kind: 'conv', seed: 5, params: { size: 8, channels: 1 } }).bytes);
    const r = await runTrial(context({ path, inputs: { input: ['N', 1, 8, 8] } }), {
      index: 0,
      stage: 's',
      role: { kind: 'probe' },
      config: { batch_size: 3 },
      measure,
    });
    assert.equal(r.outcome, 'ok', r.reason + r.stderr_tail);
    assert.equal(r.steps[0]!.samples, 3);
  });

  it('crashes with the runtime message when the declared shape is wrong', async () => {
    const { generate } = await import('../../harness/workloads/onnx/models/index.js');
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const path = join(tempDir(), 'user-model.onnx');
    writeFileSync(path, generate({ kind: 'mlp', seed: 5, params: { input: 16 } }).bytes);
    const r = await runTrial(context({ path, inputs: { input: ['batch', 17] } }), {
      index: 0,
      stage: 's',
      role: { kind: 'probe' },
      config: { batch_size: 3 },
      measure,
    });
    assert.equal(r.outcome, 'crash');
    assert.match(r.stderr_tail, /input|dimension|shape/i);
  });
});
