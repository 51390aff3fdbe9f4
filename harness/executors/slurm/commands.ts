// SLURM's client commands, as argument arrays (never a shell string): sbatch, squeue, sacct and scontrol,
// with their output parsed and each failure explained.
import type { execa as Execa } from 'execa';
import { ConfigError, TrialError } from '../../errors.js';

let execaLoaded: Promise<typeof Execa> | undefined;
/** A SLURM client command without a shell: execa, loaded on first use so that no other command pays for it at start-up. */
async function execa(file: string, args: readonly string[], options: { reject: false; timeout: number }) {
  const run = await (execaLoaded ??= import('execa').then((m) => m.execa));
  return run(file, args, options);
}

/** Job states of sacct/squeue/scontrol that this executor acts on. */
export const ACTIVE_STATES = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'REQUEUE_FED',
  'REQUEUE_HOLD',
  'RESIZING',
  'SIGNALING',
  'STAGE_OUT',
  'STOPPED',
  'PREEMPTED',
  'RESV_DEL_HOLD',
]);

async function slurm(cmd: string, args: readonly string[]): Promise<string> {
  try {
    const r = await execa(cmd, args, { reject: false, timeout: 60_000 });
    if (r.exitCode !== 0)
      throw new TrialError(
        `${cmd} ${args.join(' ')} failed (exit ${r.exitCode}): ${String(r.stderr).trim() || String(r.stdout).trim()}`,
      );
    return String(r.stdout);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ConfigError(
        `${cmd} was not found on PATH: the slurm executor needs SLURM's client commands ` +
          '(sbatch, squeue, scontrol); run on a login node, or use --executor local',
        [],
        { cause: error },
      );
    }
    throw error;
  }
}

/** Submits a batch script; returns the job id (sbatch --parsable prints "id" or "id;cluster"). */
export async function sbatch(
  args: readonly string[],
  script: string,
  scriptArgs: readonly string[] = [],
): Promise<string> {
  const out = (await slurm('sbatch', ['--parsable', ...args, script, ...scriptArgs])).trim();
  const id = out.split(';')[0]!;
  if (!/^\d+$/.test(id)) throw new TrialError(`sbatch printed ${JSON.stringify(out)}, not a job id`);
  return id;
}

/** The cluster's MaxArraySize: array indices must be below it (default 1001). */
export async function maxArraySize(): Promise<number> {
  const out = await slurm('scontrol', ['show', 'config']);
  const m = /^MaxArraySize\s*=\s*(\d+)/m.exec(out);
  return m ? Number(m[1]) : 1001;
}

/** "<job>_<task>" -> state, from one line per array task. */
export type TaskStates = Map<string, string>;

/** Array tasks still in the queue (squeue --array lists one line per task, pending ones too). */
export async function queuedStates(jobIds: readonly string[]): Promise<TaskStates> {
  const states: TaskStates = new Map();
  if (jobIds.length === 0) return states;
  // squeue exits non-zero for job ids it no longer knows; that only means they left the queue.
  const r = await execa('squeue', ['--array', '--noheader', `--jobs=${jobIds.join(',')}`, '--format=%i|%T'], {
    reject: false,
    timeout: 60_000,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT')
      throw new ConfigError("squeue was not found on PATH: the slurm executor needs SLURM's client commands", [], {
        cause: error,
      });
    throw error;
  });
  for (const line of String(r.stdout).split('\n')) {
    const [id, state] = line.trim().split('|');
    if (id && state) for (const task of expandTaskIds(id)) states.set(task, state.trim());
  }
  return states;
}

/**
 * Final states of array tasks that left the queue: from sacct when accounting is enabled, else from
 * `scontrol show job` (which remembers finished jobs for MinJobAge seconds).
 */
export async function finishedStates(jobIds: readonly string[]): Promise<TaskStates> {
  const states: TaskStates = new Map();
  if (jobIds.length === 0) return states;
  const acct = await execa(
    'sacct',
    ['--noheader', '--parsable2', '--allocations', `--jobs=${jobIds.join(',')}`, '--format=JobID,State'],
    { reject: false, timeout: 60_000 },
  ).catch(() => null);
  if (acct && acct.exitCode === 0 && String(acct.stdout).trim()) {
    for (const line of String(acct.stdout).split('\n')) {
      const [id, state] = line.trim().split('|');
      // "CANCELLED by 0" -> "CANCELLED"
      if (id && state) states.set(id, state.split(' ')[0]!);
    }
    return states;
  }
  for (const job of jobIds) {
    const r = await execa('scontrol', ['show', 'job', '--oneliner', job], { reject: false, timeout: 60_000 });
    for (const line of String(r.stdout).split('\n')) {
      const jobId = /\bArrayJobId=(\d+)/.exec(line)?.[1];
      const task = /\bArrayTaskId=(\d+)\b/.exec(line)?.[1];
      const state = /\bJobState=(\S+)/.exec(line)?.[1];
      if (jobId && task && state) states.set(`${jobId}_${task}`, state);
    }
  }
  return states;
}

/** squeue's "123_[4-6%2]" and "123_4" forms: expands pending ranges to one id per task. */
export function expandTaskIds(id: string): string[] {
  const m = /^(\d+)_\[([^\]%]+)(?:%\d+)?\]$/.exec(id);
  if (!m) return [id];
  const out: string[] = [];
  for (const part of m[2]!.split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let t = a!; t <= (b ?? a!); t++) out.push(`${m[1]}_${t}`);
  }
  return out;
}
