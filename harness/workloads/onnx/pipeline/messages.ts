// Messages between the data loader and its worker threads, and the fault injection used in tests.
import type { PreprocessSpec } from './preprocess.js';

export interface WorkerInit {
  preprocess: PreprocessSpec;
  batchSize: number;
  /** Fault injection for testing the harness: throw or hang when producing this batch. */
  fault?: PipelineFault;
}

export interface PipelineFault {
  kind: 'throw' | 'hang';
  batch: number;
}

export interface BatchRequest {
  batch: number;
}

export type WorkerReply = { batch: number; data: Float32Array } | { batch: number; error: string };
