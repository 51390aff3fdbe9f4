// The previous code's generator is the same as today's: harness/stats/rng.ts, unchanged since 2aed9d5.
export { createRng, fillUniform } from '../../../harness/stats/rng.js';
