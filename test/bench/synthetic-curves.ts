// The benchmark's synthetic memory curves: shapes x noise x true maxima spread from 16 to 1,000,000.
import { capFor, type CurveShape, type CurveSpec } from '../support/synthetic.js';

export const BENCH_MULTIPLE_OF = 8;
export const BENCH_CEILING = 1 << 21;
/** Fixed memory of every synthetic curve (runtime, weights). */
export const BENCH_BASE_BYTES = 800 * 2 ** 20;

/**
 * Noise of memory readings as measured between identical ONNX trials here (RESULTS.md): none,
 * peak RSS (Gaussian, about 0.05%) and peak address space (two-valued, +1.1% on some runs).
 */
export const BENCH_NOISE: readonly { name: string; noise: number; noiseKind: 'gaussian' | 'bimodal' }[] = [
  { name: 'exact', noise: 0, noiseKind: 'gaussian' },
  { name: 'rss', noise: 0.0005, noiseKind: 'gaussian' },
  { name: 'address-space', noise: 0.011, noiseKind: 'bimodal' },
];

/** 4 shapes x 3 noise levels x 8 maxima = 96 curves. */
export function benchCurves(): { name: string; curve: CurveSpec; target: number }[] {
  const shapes: CurveShape[] = ['linear', 'quadratic', 'staircase', 'sublinear'];
  const maxima = [16, 100, 1_000, 5_000, 20_000, 100_000, 400_000, 1_000_000];
  const out: { name: string; curve: CurveSpec; target: number }[] = [];
  let seed = 1;
  for (const shape of shapes) {
    for (const { name: noiseName, noise, noiseKind } of BENCH_NOISE) {
      for (const target of maxima) {
        // Batch-dependent memory at the max is twice the fixed memory (the cap is about three times
        // the weights and runtime), so a small max means large samples, as in real workloads.
        const perSample = (2 * BENCH_BASE_BYTES) / target;
        // Base memory of the same order as the dynamic part at the max, like a runtime plus weights.
        const partial = {
          shape,
          base: BENCH_BASE_BYTES,
          perSample,
          noise,
          noiseKind,
          seed: seed++,
          chunk: (perSample * target) / 16,
        };
        out.push({
          name: `${shape}/${noiseName}/max~${target}`,
          curve: { ...partial, cap: capFor(partial, target) },
          target,
        });
      }
    }
  }
  return out;
}
