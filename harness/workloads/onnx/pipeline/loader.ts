// The Node counterpart of a PyTorch DataLoader: num_workers threads, each keeping prefetch_factor
// batches in flight, delivered in order; num_workers 0 preprocesses inline in the consumer.
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PipelineFault, WorkerInit, WorkerReply } from './messages.js';
import { preprocessBatch, type PreprocessSpec } from './preprocess.js';

export interface LoaderOptions {
  numWorkers: number;
  prefetchFactor: number;
  persistentWorkers: boolean;
  batchSize: number;
  preprocess: PreprocessSpec;
  fault?: PipelineFault;
}

export interface LoadedBatch {
  data: Float32Array;
  /** Seconds the consumer waited for this batch: the data stall. */
  waitSeconds: number;
}

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));

interface Pending {
  resolve: (data: Float32Array) => void;
  reject: (error: Error) => void;
}

class WorkerPool {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, Pending>();
  private readonly ready = new Map<number, Float32Array>();
  private failure: Error | undefined;

  constructor(count: number, init: WorkerInit) {
    this.workers = Array.from({ length: count }, (_, i) => {
      const w = new Worker(WORKER, { workerData: init });
      w.on('message', (reply: WorkerReply) => this.settle(reply));
      w.on('error', (error) => this.fail(new Error(`data-loader worker ${i} failed: ${error.message}`)));
      w.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`data-loader worker ${i} exited with code ${code}`));
      });
      return w;
    });
  }

  request(batch: number): void {
    this.workers[batch % this.workers.length]!.postMessage({ batch });
  }

  take(batch: number): Promise<Float32Array> {
    if (this.failure) return Promise.reject(this.failure);
    const done = this.ready.get(batch);
    if (done) {
      this.ready.delete(batch);
      return Promise.resolve(done);
    }
    return new Promise((resolve, reject) => this.pending.set(batch, { resolve, reject }));
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private closing = false;

  private settle(reply: WorkerReply): void {
    if ('error' in reply) {
      this.fail(new Error(`data-loader worker failed on batch ${reply.batch}: ${reply.error}`));
      return;
    }
    const waiter = this.pending.get(reply.batch);
    if (waiter) {
      this.pending.delete(reply.batch);
      waiter.resolve(reply.data);
    } else this.ready.set(reply.batch, reply.data);
  }

  private fail(error: Error): void {
    if (this.closing || this.failure) return;
    this.failure = error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

export class DataLoader {
  private pool: WorkerPool | undefined;

  constructor(private readonly opts: LoaderOptions) {}

  /** Yields `batches` batches in order; batch numbers continue from `first` (so epochs differ). */
  async *epoch(first: number, batches: number): AsyncGenerator<LoadedBatch> {
    const o = this.opts;
    if (o.numWorkers === 0) {
      for (let b = first; b < first + batches; b++) {
        const t0 = process.hrtime.bigint();
        if (o.fault?.batch === b)
          throw new Error(`injected fault: inline loader failed while preprocessing batch ${b}`);
        const data = preprocessBatch(o.preprocess, b, o.batchSize);
        yield { data, waitSeconds: Number(process.hrtime.bigint() - t0) / 1e9 };
      }
      return;
    }
    this.pool ??= new WorkerPool(o.numWorkers, {
      preprocess: o.preprocess,
      batchSize: o.batchSize,
      ...(o.fault ? { fault: o.fault } : {}),
    });
    const pool = this.pool;
    const inFlight = o.numWorkers * o.prefetchFactor;
    const end = first + batches;
    for (let b = first; b < Math.min(end, first + inFlight); b++) pool.request(b);
    for (let b = first; b < end; b++) {
      const t0 = process.hrtime.bigint();
      const data = await pool.take(b);
      const waitSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
      // The worker that delivered batch b gets its next request, keeping prefetch_factor in flight.
      if (b + inFlight < end) pool.request(b + inFlight);
      yield { data, waitSeconds };
    }
    if (!o.persistentWorkers) await this.close();
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
  }
}
