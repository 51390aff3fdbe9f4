// SIGINT and SIGTERM stop the current trial (its process tree is killed) instead of killing tunebench.
import { TrialError } from '../errors.js';

export async function withStopSignals<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const stop = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(130);
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
