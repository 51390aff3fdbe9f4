// A data-loader worker thread: produces the batches it is asked for and transfers them back.
import { parentPort, workerData } from 'node:worker_threads';
import type { BatchRequest, WorkerInit, WorkerReply } from './messages.js';
import { preprocessBatch } from './preprocess.js';

const init = workerData as WorkerInit;

parentPort!.on('message', (req: BatchRequest) => {
  let reply: WorkerReply;
  try {
    if (init.fault?.batch === req.batch) {
      if (init.fault.kind === 'hang') for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
      throw new Error(`injected fault: worker failed while preprocessing batch ${req.batch}`);
    }
    reply = { batch: req.batch, data: preprocessBatch(init.preprocess, req.batch, init.batchSize) };
  } catch (error) {
    reply = { batch: req.batch, error: error instanceof Error ? error.message : String(error) };
  }
  if ('data' in reply) parentPort!.postMessage(reply, [reply.data.buffer as ArrayBuffer]);
  else parentPort!.postMessage(reply);
});
