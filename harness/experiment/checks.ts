// Checks that span several fields, after the schema has validated each one.
import { ConfigError } from '../errors.js';
import type { Experiment } from './schema.js';

/**
 * onnxruntime-node (1.30) parses only logSeverityLevel, logVerbosityLevel, tag and terminate from
 * run options, so the run config entry memory.enable_memory_arena_shrinkage never reaches ONNX
 * Runtime; running "shrink-every-run" would silently measure "keep".
 */
export const ARENA_SHRINK_UNSUPPORTED =
  '"shrink-every-run" needs the run option memory.enable_memory_arena_shrinkage, which onnxruntime-node does not pass to ONNX Runtime (its run options carry only log levels, tag and terminate); use "keep" or "off"';

export function checkExperiment(e: Experiment, source: string): void {
  const issues: { path: string; message: string }[] = [];
  e.stages.forEach((stage, i) => {
    if (stage.kind === 'max-batch') {
      if (e.limits.memory === undefined && e.workload.params?.execution_provider !== 'cuda') {
        issues.push({ path: `stages[${i}]`, message: 'a max-batch stage on CPU needs limits.memory (for example "3GiB"), so that probes fail by OOM instead of exhausting the machine' });
      }
      const m = stage.multiple_of ?? 8;
      if ((stage.ceiling ?? 1 << 20) < m) issues.push({ path: `stages[${i}].ceiling`, message: `expected at least multiple_of (${m}), got ${stage.ceiling}` });
      if (stage.start !== undefined && stage.start > (stage.ceiling ?? 1 << 20)) issues.push({ path: `stages[${i}].start`, message: `expected at most ceiling (${stage.ceiling ?? 1 << 20}), got ${stage.start}` });
      const fixed = e.workload.params as Record<string, unknown> | undefined;
      if (fixed && fixed[stage.param ?? 'batch_size'] !== undefined) {
        issues.push({ path: `workload.params.${stage.param ?? 'batch_size'}`, message: `is searched by stages[${i}]; remove the fixed value` });
      }
    }
  });
  if (e.workload.kind === 'onnx' && e.workload.params?.arena === 'shrink-every-run') {
    issues.push({ path: 'workload.params.arena', message: ARENA_SHRINK_UNSUPPORTED });
  }
  const names = e.stages.map((s, i) => s.name ?? `${s.kind}-${i + 1}`);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i) issues.push({ path: `stages[${i}].name`, message: `expected a unique stage name, got ${JSON.stringify(n)} again` });
  });
  if (issues.length > 0) {
    throw new ConfigError(`${source}: invalid experiment (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`, issues);
  }
}

export function stageName(stage: { name?: string; kind: string }, index: number): string {
  return stage.name ?? `${stage.kind}-${index + 1}`;
}
