// Two reference batch-size finders, written from their documented algorithms: the benchmark's baselines, and
// the first phase of a max-batch stage's search under `strategy: power-bisect` or `shrink-on-oom`.
import type { ProbeFn } from './probe.js';

export interface ReferenceResult {
  max: number | null;
  probes: number;
}

/**
 * Lightning's BatchSizeFinder, mode "binsearch": double from `init` until a failure, then bisect
 * between the last success and the first failure until they are one step apart. Steps here are
 * multiples of `multipleOf` so that all strategies answer on the same grid. A failure that is not an
 * out-of-memory one ends it with no answer, as Lightning raises every other error.
 */
export async function powerThenBisect(
  run: ProbeFn,
  opts: { init: number; multipleOf: number; ceiling: number },
): Promise<ReferenceResult> {
  let probes = 0;
  let low = 0;
  let high: number | null = null;
  let size = opts.init;
  for (;;) {
    probes += 1;
    const r = await run(size, 'probe');
    if (!r.ok && r.outcome !== 'oom') return { max: null, probes };
    const ok = r.ok;
    if (ok) low = Math.max(low, size);
    else high = high === null ? size : Math.min(high, size);
    if (high === null) {
      if (size >= opts.ceiling) break;
      size = Math.min(size * 2, opts.ceiling);
      continue;
    }
    const mid = Math.floor((low + high) / 2 / opts.multipleOf) * opts.multipleOf;
    if (mid <= low || high - low <= opts.multipleOf) break;
    size = mid;
  }
  const max = low > 0 ? Math.floor(low / opts.multipleOf) * opts.multipleOf : null;
  return { max: max === 0 ? null : max, probes };
}

/**
 * Accelerate's find_executable_batch_size: start at `start` and multiply by 0.9 after every
 * out-of-memory failure; the first size that runs is the answer. Any other failure ends it with no
 * answer, as Accelerate raises every error that is not an out-of-memory one.
 */
export async function shrinkOnOom(
  run: ProbeFn,
  opts: { start: number; multipleOf: number; factor?: number },
): Promise<ReferenceResult> {
  const factor = opts.factor ?? 0.9;
  let size = Math.floor(opts.start / opts.multipleOf) * opts.multipleOf;
  let probes = 0;
  while (size >= opts.multipleOf) {
    probes += 1;
    const r = await run(size, 'probe');
    if (r.ok) return { max: size, probes };
    if (r.outcome !== 'oom') return { max: null, probes };
    size = Math.floor((size * factor) / opts.multipleOf) * opts.multipleOf;
  }
  return { max: null, probes };
}
