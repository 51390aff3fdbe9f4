// The six error classes and the documented exit codes; `main` reports each error once.

/** Exit codes of the `tunebench` command. */
export const EXIT = {
  ok: 0,
  /** The harness itself failed: a bug, a broken install, an unwritable directory. */
  harness: 1,
  /** Invalid input: a malformed experiment file, an unknown option, a missing file. */
  invalid: 2,
  /** gate, compare / history --fail-on-regression: a significant regression beyond the threshold. */
  regression: 3,
  /** tunebench history --fail-on-config-change: the latest run chose another config than its baseline. */
  configChanged: 4,
  /** Stopped by SIGINT or SIGTERM; completed trials are kept in the journal. */
  stopped: 130,
} as const;

/** Invalid input from the user: an experiment file, a flag or a path. Exit code 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly issues: readonly { path: string; message: string }[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A trial could not be started or observed (not a failed workload: that is data). Exit code 1. */
export class TrialError extends Error {
  override readonly name = 'TrialError';
}

/** The run directory or journal could not be read or written. Exit code 1. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}

/**
 * A stage failed at a value an earlier stage chose (every config OOMed at the chosen batch) and no lower
 * value rescued it: the harness's answer did not hold. The run directory and its reports are written. Exit code 1.
 */
export class StageFailedError extends Error {
  override readonly name = 'StageFailedError';
}

/** The run was stopped by a signal; what completed is in the journal. Exit code 130. */
export class StoppedError extends Error {
  override readonly name = 'StoppedError';
}

/**
 * `--no-wait`: trials were submitted to SLURM and the coordinator returns; `tunebench collect` goes
 * on. Exit code 0.
 */
export class DetachedError extends Error {
  override readonly name = 'DetachedError';
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof ConfigError) return EXIT.invalid;
  if (error instanceof StoppedError) return EXIT.stopped;
  if (error instanceof DetachedError) return EXIT.ok;
  return EXIT.harness;
}
