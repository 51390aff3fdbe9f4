// Every terminating signal a user or a system sends (SIGINT, SIGTERM, SIGHUP from a closed terminal,
// SIGQUIT) stops the current trial (its process tree is killed) instead of killing tunebench.
import { hardExit } from '../engine/hard-exit.js';
import { TrialError } from '../errors.js';

/** The signals that stop a run (exit 130); any of them twice exits at once. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

export async function withStopSignals<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const stop = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      // The second signal: no waiting for the trial to stop, but its processes still die, and the
      // run directory is marked stopped and unlocked so that it can be resumed.
      const resume = hardExit('stopped', `stopped by a second ${name}`);
      say(
        `tunebench: second ${name}: the trial was killed and the run marked stopped; ` +
          `resume it with ${resume.join(' or ') || 'tunebench run --resume and the run directory it printed'}\n`,
      );
      process.exit(130);
    }
    say(`\ntunebench: ${name} received; stopping the current trial (send again to exit at once)\n`);
    controller.abort(new TrialError(`stopped by ${name}`));
  };
  for (const name of STOP_SIGNALS) process.on(name, stop);
  try {
    return await work(controller.signal);
  } finally {
    for (const name of STOP_SIGNALS) process.off(name, stop);
  }
}

/** After SIGHUP the terminal may be gone: a failed write must not turn a clean stop into a crash. */
function say(text: string): void {
  try {
    process.stderr.write(text);
  } catch {
    // Nobody is left to read it; run.json and the journal say what happened.
  }
}
