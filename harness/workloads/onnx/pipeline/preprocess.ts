// Per-sample CPU work of the synthetic data pipeline: "decode" a seeded sample, then "augment" it.
import { createRng } from '../../../stats/rng.js';

export interface PreprocessSpec {
  /** Values per sample (the model's input width). */
  sampleSize: number;
  /** Augmentation passes per sample; each is a 3-tap blur and a renormalisation over the sample. */
  cost: number;
  seed: number;
}

/** Writes sample `index` into out[offset .. offset + sampleSize). Deterministic in (seed, index). */
export function preprocessSample(spec: PreprocessSpec, index: number, out: Float32Array, offset: number): void {
  const rng = createRng((spec.seed * 0x9e3779b1 + index) >>> 0);
  const n = spec.sampleSize;
  // Decode: bytes of a synthetic image, as if read from a compressed file.
  for (let i = 0; i < n; i++) out[offset + i] = Math.floor(rng() * 256);
  // Augment: a random flip, then `cost` blur passes with renormalisation.
  if (rng() < 0.5) out.subarray(offset, offset + n).reverse();
  for (let pass = 0; pass < spec.cost; pass++) {
    let prev = out[offset]!;
    let sum = 0;
    for (let i = 1; i < n - 1; i++) {
      const cur = out[offset + i]!;
      const blurred = 0.25 * prev + 0.5 * cur + 0.25 * out[offset + i + 1]!;
      prev = cur;
      out[offset + i] = blurred;
      sum += blurred;
    }
    const mean = sum / Math.max(1, n - 2);
    const scale = mean > 0 ? 128 / mean : 1;
    for (let i = 0; i < n; i++) out[offset + i] = out[offset + i]! * scale;
  }
  for (let i = 0; i < n; i++) out[offset + i] = out[offset + i]! / 255 - 0.5;
}

/** A whole batch: samples batchIndex * batchSize onward. */
export function preprocessBatch(spec: PreprocessSpec, batchIndex: number, batchSize: number): Float32Array {
  const out = new Float32Array(batchSize * spec.sampleSize);
  for (let s = 0; s < batchSize; s++) preprocessSample(spec, batchIndex * batchSize + s, out, s * spec.sampleSize);
  return out;
}
