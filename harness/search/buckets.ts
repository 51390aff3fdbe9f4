// Max batch per sequence-length bucket: every bucket gets its own exact search, longest first. A
// shorter bucket starts from the longer neighbour's max (it holds no more memory per sample, so that
// batch fits) and is guided by one memory model fitted across all buckets' readings so far.
import { findMaxBatch, type MaxBatchOptions, type MaxBatchResult } from './max-batch.js';
import { fitLengthModel, predictBucket, type LengthModel, type LengthReading } from './length-model.js';
import type { ProbeFn } from './probe.js';

export interface BucketResult {
  /** The bucket parameter's value (a sequence length). */
  value: number;
  result: MaxBatchResult;
}

export interface BucketSearch {
  /** Longest first, the order they were searched in. */
  buckets: BucketResult[];
  /** The model across buckets from every reading, when the readings span two lengths or more. */
  model: LengthModel | undefined;
  /** Search probes and failed confirmations of all buckets together. */
  probesToMax: number;
}

/**
 * Searches every bucket value, longest first. `runAt(value)` runs probes at that value; `opts` are
 * the stage's (throughput points are the caller's choice: per bucket they multiply).
 */
export async function findMaxBatchPerBucket(
  runAt: (value: number) => ProbeFn,
  values: readonly number[],
  opts: MaxBatchOptions,
): Promise<BucketSearch> {
  const order = [...new Set(values)].sort((a, b) => b - a);
  const readings: LengthReading[] = [];
  const buckets: BucketResult[] = [];
  let neighbourMax: number | null = null;
  for (const value of order) {
    const cap = opts.capBytes;
    const result = await findMaxBatch(runAt(value), {
      ...opts,
      ...(neighbourMax !== null ? { knownOk: neighbourMax } : {}),
      ...(cap !== null && readings.length > 0
        ? {
            predict: (own) => predictBucket([...readings, ...own.map((r) => ({ ...r, length: value }))], value, cap),
          }
        : {}),
    });
    buckets.push({ value, result });
    for (const p of result.probes)
      if (p.ok && p.limitedBytes !== null) readings.push({ batch: p.batch, length: value, bytes: p.limitedBytes });
    // A failed workload says nothing about the next bucket; a max (even at the ceiling) fits every shorter one.
    if (result.max !== null && result.status !== 'failed') neighbourMax = Math.max(neighbourMax ?? 0, result.max);
  }
  return {
    buckets,
    model: fitLengthModel(readings),
    probesToMax: buckets.reduce((s, b) => s + b.result.probesToMax, 0),
  };
}
