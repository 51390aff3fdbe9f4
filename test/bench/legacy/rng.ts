// Frozen copy of harness/stats/rng.ts at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
// Seeded pseudo-random numbers: reproducible weights, synthetic inputs and bootstrap resamples.

/** mulberry32: a small 32-bit generator; good enough for weights and synthetic inputs. */
export function createRng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fills a Float32Array with uniform values in [-scale, scale). */
export function fillUniform(values: Float32Array, rng: () => number, scale: number): Float32Array {
  for (let i = 0; i < values.length; i++) values[i] = (rng() * 2 - 1) * scale;
  return values;
}
