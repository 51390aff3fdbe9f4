// workload.launcher: a trial's command run as N ranks on this node by torch.distributed.run (torchrun).
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LauncherSpec {
  kind: 'torchrun';
  nproc_per_node: number;
  /** Interpreter that runs `-m torch.distributed.run`; default: the workload's python, else torchrun on PATH. */
  python?: string;
}

/** The program that starts the ranks, and the field that names it (for messages). */
export function launcherProgram(
  launcher: LauncherSpec,
  workloadPython: string | undefined,
): { argv: string[]; field: string } {
  if (launcher.python !== undefined)
    return { argv: [launcher.python, '-m', 'torch.distributed.run'], field: 'workload.launcher.python' };
  if (workloadPython !== undefined)
    return { argv: [workloadPython, '-m', 'torch.distributed.run'], field: 'workload.python' };
  return { argv: ['torchrun'], field: 'torchrun on PATH' };
}

/**
 * torchrun's options shared by trials and the reproduce command. `--redirects=1 --tee=1`: torch
 * before 2.0 under Python 3.11 fails at the default 0 ("'NoneType' object has no attribute 'get'",
 * its Std flag 0 is no longer iterable); 1 keeps stderr untouched and copies stdout, which the
 * harness ignores, to the launcher's.
 */
function commonOptions(launcher: LauncherSpec): string[] {
  return ['--nnodes=1', `--nproc_per_node=${launcher.nproc_per_node}`, '--redirects=1', '--tee=1'];
}

/**
 * A trial's command as ranks. The rendezvous store listens on a port the kernel picks (port 0), so
 * two trials (or two runs) at once never meet; `--standalone` would fix 29400. The agent checks its
 * ranks every 0.1 s instead of 5, so a rank that fails ends the trial at once. Its log files go to
 * `logDir`, which the harness removes after the trial.
 */
export function torchrunTrial(
  launcher: LauncherSpec,
  workloadPython: string | undefined,
  argv: readonly string[],
): { argv: string[]; logDir: string; field: string } {
  const logDir = join(tmpdir(), `tunebench-torchrun-${randomUUID()}`);
  const program = launcherProgram(launcher, workloadPython);
  return {
    argv: [
      ...program.argv,
      ...commonOptions(launcher),
      '--rdzv_backend=c10d',
      '--rdzv_endpoint=127.0.0.1:0',
      '--monitor_interval=0.1',
      `--log_dir=${logDir}`,
      '--no_python',
      ...argv,
    ],
    logDir,
    field: program.field,
  };
}

/** The command that trains with the chosen config outside tunebench: one run, so `--standalone` does. */
export function torchrunTraining(
  launcher: LauncherSpec,
  workloadPython: string | undefined,
  argv: readonly string[],
): string[] {
  return [
    ...launcherProgram(launcher, workloadPython).argv,
    '--standalone',
    ...commonOptions(launcher),
    '--no_python',
    ...argv,
  ];
}
