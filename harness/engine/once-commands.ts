// `tunebench time --setup/--cleanup`: programs run once per command around the experiment, untimed.
import { spawnSync } from 'node:child_process';
import { ConfigError } from '../errors.js';
import type { ContainedCommands } from '../trial/contained-commands.js';

/**
 * Runs each program in turn (no shell of its own: a shell is in the argv where --shell asked for one),
 * its stdout discarded and its stderr kept for the message; throws at the first that does not exit 0.
 * Each runs inside the run's cgroup for such commands (`contained`): what it leaves running, such as a
 * server it starts for the benchmark, lives until the run ends, then is ended with it.
 */
export function runOnce(
  argvs: readonly string[][],
  flag: string,
  timeoutSeconds: number,
  contained: ContainedCommands,
): void {
  for (const argv of argvs) {
    const w = contained.wrap(argv, process.env);
    const r = spawnSync(w.argv[0]!, w.argv.slice(1), {
      env: w.env,
      // fd 3: the join wrapper's word, collected and ignored.
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      timeout: timeoutSeconds * 1000,
      killSignal: 'SIGKILL',
    });
    const shown = JSON.stringify(argv.join(' '));
    if (r.error && r.status === null && r.signal === null)
      throw new ConfigError(
        `${flag} ${shown}: could not run it (${r.error.message}); fix the command or drop ${flag}`,
        [],
        {
          cause: r.error,
        },
      );
    if (r.status === 0) continue;
    const tail = (r.stderr?.toString() ?? '').trim().split('\n').slice(-3).join(' | ');
    const how = r.error
      ? `timed out after ${timeoutSeconds} s`
      : r.signal
        ? `signal ${r.signal}`
        : `exit code ${r.status}`;
    throw new ConfigError(
      `${flag} ${shown} failed (${how})${tail ? `; stderr: ${tail}` : ''}: it must exit 0; fix it, or drop ${flag}`,
    );
  }
}
