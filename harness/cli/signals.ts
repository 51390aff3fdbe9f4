// SIGINT and SIGTERM stop the current trial (its process tree is killed) instead of killing tunebench.
import { hardExit } from '../engine/hard-exit.js';
import { TrialError } from '../errors.js';

export async function withStopSignals<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const stop = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      // The second signal: no waiting for the trial to stop, but its processes still die, and the
      // run directory is marked stopped and unlocked so that it can be resumed.
      const resume = hardExit('stopped', `stopped by a second ${name}`);
      process.stderr.write(
        `tunebench: second ${name}: the trial was killed and the run marked stopped; ` +
          `resume it with ${resume.join(' or ') || 'tunebench run --resume and the run directory it printed'}\n`,
      );
      process.exit(130);
    }
    process.stderr.write(`\ntunebench: ${name} received; stopping the current trial (send again to exit at once)\n`);
    controller.abort(new TrialError(`stopped by ${name}`));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
