// The head of an experiment on the simulated card (test/fixtures/programs/simulated-gpu.mjs: 40 MiB a
// sample of 16 GiB unless its flags say otherwise), up to `stages:`; a test appends its stages.
import { join } from 'node:path';
import { PROGRAMS } from './paths.js';

/** `args` are the program's flags, each written as a YAML string; `timeout` is limits.timeout. */
export function simulatedGpuHead(name: string, args: readonly string[], timeout = '30s'): string {
  const argv = [join(PROGRAMS, 'simulated-gpu.mjs'), ...args.map((a) => JSON.stringify(a))].join(', ');
  return `name: ${name}
workload:
  kind: command
  command: [node, ${argv}]
  protocol: required
  params: { device: cuda }
limits: { timeout: ${timeout} }
measure: { warmup_steps: 1, steps: 2 }
stages:
`;
}
