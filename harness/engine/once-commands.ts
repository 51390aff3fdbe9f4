// `tunebench time --setup/--cleanup`: programs run once per command around the experiment, untimed.
import { spawnSync } from 'node:child_process';
import { ConfigError } from '../errors.js';

/**
 * Runs each program in turn (no shell of its own: a shell is in the argv where --shell asked for one),
 * its stdout discarded and its stderr kept for the message; throws at the first that does not exit 0.
 */
export function runOnce(argvs: readonly string[][], flag: string, timeoutSeconds: number): void {
  for (const argv of argvs) {
    const r = spawnSync(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'ignore', 'pipe'],
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
