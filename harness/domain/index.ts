// The shared vocabulary of every layer: records, outcomes, parameter values, stage results, runs.
export * from './params.js';
export * from './telemetry.js';
export * from './memory.js';
export * from './trial.js';
export * from './measures.js';
export * from './notes.js';
export * from './stages.js';
export * from './run.js';
export * from './roles.js';
export * from './devices.js';
