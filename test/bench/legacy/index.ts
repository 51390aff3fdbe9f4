// Frozen copy of tunebench's verdict code at 2aed9d5 for the calibration benchmark (old vs new); do not edit.
export * from './types.js';
export * from './rng.js';
export * from './bootstrap.js';
export * from './throughput.js';
export * from './mann-whitney.js';
export * from './verdict.js';
export * from './decision.js';
export * from './claim.js';
export * from './adaptive.js';
export * from './rank.js';
export * from './sweep.js';
export * from './loops.js';
