// The previous code's verdict words are today's: harness/stats/verdict.ts, unchanged since 2aed9d5 but for an import.
export { direction, memoryVerdict, speedVerdict, type Direction } from '../../../harness/stats/verdict.js';
export type { MemoryVerdict, SpeedVerdict } from '../../../harness/domain/index.js';
