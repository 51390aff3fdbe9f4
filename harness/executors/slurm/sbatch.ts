// What goes to sbatch: the resource arguments of every task, task numbers as array ranges split at
// the cluster's MaxArraySize, and the batch script, which passes no parameter value through a shell.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutorSpec } from '../../experiment/schema.js';
import { makeDirs } from '../../store/run-dir.js';
import { shellQuote } from '../../util/shell.js';
import { SLURM_DIR } from './batch.js';

/** sbatch arguments for the resources of every task; `constraint` (a stage's own) replaces the executor's. */
export function resourceArgs(spec: ExecutorSpec, constraint: string | undefined = spec.constraint): string[] {
  const args: string[] = [];
  if (spec.partition) args.push(`--partition=${spec.partition}`);
  if (spec.account) args.push(`--account=${spec.account}`);
  if (spec.gres) args.push(`--gres=${spec.gres}`);
  if (spec.cpus_per_task) args.push(`--cpus-per-task=${spec.cpus_per_task}`);
  if (spec.mem) args.push(`--mem=${spec.mem}`);
  if (spec.time) args.push(`--time=${spec.time}`);
  if (constraint) args.push(`--constraint=${constraint}`);
  return [...args, ...spec.extra_args];
}

/** Task numbers as sbatch array ranges: [0,1,2,5] -> "0-2,5". */
export function arrayRanges(indices: readonly number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** Splits task numbers into submissions whose array indices stay below maxArray: (offset, indices). */
export function splitForArrays(tasks: readonly number[], maxArray: number): { offset: number; tasks: number[] }[] {
  const chunks = new Map<number, number[]>();
  for (const t of tasks) {
    const offset = Math.floor(t / maxArray) * maxArray;
    chunks.set(offset, [...(chunks.get(offset) ?? []), t]);
  }
  return [...chunks].sort(([a], [b]) => a - b).map(([offset, ts]) => ({ offset, tasks: ts }));
}

/**
 * The batch script: exec tunebench with fixed arguments; sbatch appends the rest. No parameter
 * values pass through a shell.
 */
export function writeScript(runDir: string, name: string, command: string[]): string {
  const dir = join(runDir, SLURM_DIR);
  makeDirs(dir);
  const path = join(dir, name);
  const text = [
    '#!/bin/sh',
    '# Written by tunebench: runs one trial (or one stage) of this run directory.',
    `exec ${command.map(shellQuote).join(' ')} "$@"`,
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o755 });
  return path;
}
