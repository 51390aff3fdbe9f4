#!/usr/bin/env node
// The ONNX trial child: loads a model in onnxruntime-node, runs warm-up and timed steps, reports events.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import * as ort from 'onnxruntime-node';
import { createRng } from '../../stats/rng.js';
import { EventEmitterFile } from '../protocol/emitter.js';
import { ENV, INVALID_EXIT_CODE, OOM_EXIT_CODE } from '../protocol/events.js';
import { ONNX_PARAM_DEFAULTS, ONNX_WORKLOAD_ENV, type OnnxChildSpec, type OnnxParams } from './spec.js';
import { isOomMessage } from '../protocol/oom-patterns.js';
import { ARENA_SHRINK_UNSUPPORTED } from './spec.js';
import { DataLoader } from './pipeline/loader.js';

const events = new EventEmitterFile();
/** Distinct random values per input; the rest of the tensor repeats them. */
const FEED_BLOCK = 1 << 16;

/** What the harness puts in ONNX_WORKLOAD_ENV, checked: the child trusts no input it did not parse. */
const childSpecSchema = z.strictObject({
  modelPath: z.string().min(1),
  inputs: z.record(z.string(), z.array(z.union([z.number(), z.string()]))),
  warmupSteps: z.number().int().min(0),
  steps: z.number().int().min(0),
  seed: z.number(),
  pipeline: z
    .strictObject({
      cost: z.number().min(0),
      epochs: z.number().int().min(1),
      fault: z.strictObject({ kind: z.enum(['throw', 'hang']), batch: z.number().int().min(0) }).optional(),
    })
    .optional(),
}) satisfies z.ZodType<OnnxChildSpec>;

/** The trial's config (TUNEBENCH_CONFIG): an object of parameter values, each checked where it is used. */
const configSchema = z.record(z.string(), z.unknown());

function readJsonEnv<T>(name: string, schema: z.ZodType<T>): T {
  const raw = process.env[name];
  if (!raw) throw new Error(`${name} is not set; this program is started by tunebench`);
  const parsed = schema.safeParse(JSON.parse(raw));
  if (!parsed.success) throw new Error(`${name} is malformed: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function memoryStatus(): { rss: number; vm: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmHWM'), vm: kb('VmPeak') };
}

function buildFeeds(spec: OnnxChildSpec, batch: number): Record<string, ort.Tensor> {
  const rng = createRng(spec.seed);
  const feeds: Record<string, ort.Tensor> = {};
  for (const [name, dims] of Object.entries(spec.inputs)) {
    const shape = dims.map((d) => (typeof d === 'number' ? d : batch));
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    // A seeded block, then copies of it: values do not change the work of these models, and a loop
    // over every element of a large batch took a fifth of a probe's time outside its steps.
    const head = Math.min(data.length, FEED_BLOCK);
    for (let i = 0; i < head; i++) data[i] = rng() * 2 - 1;
    for (let filled = head; filled < data.length; filled *= 2) {
      data.copyWithin(filled, 0, Math.min(filled, data.length - filled));
    }
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  return feeds;
}

function sessionOptions(p: OnnxParams): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: [p.execution_provider],
    intraOpNumThreads: p.intra_op_threads,
    interOpNumThreads: p.inter_op_threads,
    enableCpuMemArena: p.arena !== 'off',
    graphOptimizationLevel: 'all',
  };
}

async function runFixedSteps(
  session: ort.InferenceSession,
  feeds: Record<string, ort.Tensor>,
  spec: OnnxChildSpec,
  batch: number,
): Promise<void> {
  const total = spec.warmupSteps + spec.steps;
  for (let i = 0; i < total; i++) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    events.emit({ event: 'step', samples: batch, seconds, warmup: i < spec.warmupSteps, ...stepMemory() });
  }
}

/** The process's peak RSS so far, for the step event (a confirmation runs until it stops growing). */
function stepMemory(): { memory_bytes: number; device: 'cpu' } {
  return { memory_bytes: process.resourceUsage().maxRSS * 1024, device: 'cpu' };
}

/** Steps fed by the data loader; each step's time includes its wait for data. */
async function runPipelineSteps(
  session: ort.InferenceSession,
  feeds: Record<string, ort.Tensor>,
  spec: OnnxChildSpec,
  p: OnnxParams,
): Promise<void> {
  const pipeline = spec.pipeline!;
  const [name, dims] = Object.entries(spec.inputs)[0]!;
  const shape = dims.map((d) => (typeof d === 'number' ? d : p.batch_size));
  const loader = new DataLoader({
    numWorkers: p.num_workers,
    prefetchFactor: p.prefetch_factor,
    persistentWorkers: p.persistent_workers,
    batchSize: p.batch_size,
    preprocess: { sampleSize: shape.slice(1).reduce((a, b) => a * b, 1), cost: pipeline.cost, seed: spec.seed },
    ...(pipeline.fault ? { fault: pipeline.fault } : {}),
  });
  const total = spec.warmupSteps + spec.steps;
  const perEpoch = Math.ceil(total / pipeline.epochs);
  let step = 0;
  try {
    for (let epoch = 0; step < total; epoch++) {
      const batches = loader.epoch(step, Math.min(perEpoch, total - step));
      for (;;) {
        const start = process.hrtime.bigint();
        const next = await batches.next();
        if (next.done) break;
        await session.run({ ...feeds, [name]: new ort.Tensor('float32', next.value.data, shape) });
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        events.emit({
          event: 'step',
          samples: p.batch_size,
          seconds,
          data_wait_seconds: next.value.waitSeconds,
          warmup: step < spec.warmupSteps,
          epoch,
          ...stepMemory(),
        });
        step += 1;
      }
    }
  } finally {
    await loader.close();
  }
}

async function main(): Promise<void> {
  const spec = readJsonEnv(ONNX_WORKLOAD_ENV, childSpecSchema);
  // The experiment file's schema checked these values; batch_size and arena are checked again below.
  const params = { ...ONNX_PARAM_DEFAULTS, ...readJsonEnv(ENV.config, configSchema) } as OnnxParams;
  if (!Number.isInteger(params.batch_size) || params.batch_size < 1) {
    events.emit({
      event: 'error',
      message: `batch_size must be a positive integer, got ${JSON.stringify(params.batch_size)}`,
    });
    process.exit(INVALID_EXIT_CODE);
  }
  if (params.arena === 'shrink-every-run') {
    events.emit({ event: 'error', message: `arena: ${ARENA_SHRINK_UNSUPPORTED}` });
    process.exit(INVALID_EXIT_CODE);
  }
  const session = await ort.InferenceSession.create(spec.modelPath, sessionOptions(params));
  const feeds = buildFeeds(spec, params.batch_size);
  if (spec.pipeline) await runPipelineSteps(session, feeds, spec, params);
  else await runFixedSteps(session, feeds, spec, params.batch_size);
  const mem = memoryStatus();
  events.emit({ event: 'memory', peak_bytes: mem.rss, peak_address_space_bytes: mem.vm });
  events.emit({ event: 'done' });
  await session.release();
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  if (isOomMessage(message)) {
    events.emit({ event: 'oom', message });
    process.stderr.write(`tunebench onnx child: out of memory: ${message}\n`);
    process.exit(OOM_EXIT_CODE);
  }
  events.emit({ event: 'error', message });
  process.stderr.write(`tunebench onnx child: ${error instanceof Error ? (error.stack ?? message) : message}\n`);
  process.exit(1);
});
