// Wiring of `tunebench time --save-baseline NAME` and `--baseline NAME`: the baseline is read (and its
// name checked) before any run, so a typo costs nothing; after the run, today's times are compared with
// it and/or saved. The logic is in analysis/time-baseline.ts and store/time-baseline.ts.
import { join } from 'node:path';
import { baselineOf, compareWithBaseline } from '../analysis/time-baseline.js';
import type { TimeSummary } from '../analysis/time-summary.js';
import { terminalLines } from './progress.js';
import { baselineLines } from '../report/time-baseline.js';
import { writeJsonAtomic } from '../store/atomic.js';
import { checkBaselineName, readTimeBaseline, writeTimeBaseline, type TimeBaseline } from '../store/time-baseline.js';
import type { CommonOptions } from './common.js';
import { readRunJson } from '../experiment/run-file.js';

/** The file in the run directory that holds the comparison with the baseline (also for --json). */
export const BASELINE_COMPARISON_FILE = 'baseline-comparison.json';

/** A type, not an interface: commander's flags object is a plain record. */
export type TimeBaselineFlags = {
  saveBaseline?: string;
  baseline?: string;
};

export interface TimeBaselineStep {
  /** After the run: compares with the baseline read before it, then saves today's runs under --save-baseline. */
  finish(summary: TimeSummary, commandLine: string): void;
}

/** Checks the names and reads the --baseline file before anything runs. */
export function timeBaselines(raw: TimeBaselineFlags, o: CommonOptions): TimeBaselineStep {
  const save = raw.saveBaseline === undefined ? undefined : checkBaselineName('--save-baseline', raw.saveBaseline);
  const against: TimeBaseline | undefined =
    raw.baseline === undefined ? undefined : readTimeBaseline(o.out, checkBaselineName('--baseline', raw.baseline));
  return {
    finish(summary, commandLine) {
      if (!save && !against) return;
      const run = readRunJson(summary.run_dir, 'the baseline cannot be compared or saved');
      if (against) {
        const comparison = compareWithBaseline(against, summary, run.environment);
        writeJsonAtomic(join(summary.run_dir, BASELINE_COMPARISON_FILE), comparison);
        if (!o.json) process.stdout.write(terminalLines(`${baselineLines(comparison).join('\n')}\n\n`));
      }
      if (save) {
        const path = writeTimeBaseline(
          o.out,
          baselineOf(summary, {
            name: save,
            command_line: commandLine,
            run_id: run.run_id,
            environment: run.environment,
            saved_at: new Date().toISOString(),
          }),
        );
        if (!o.quiet) process.stderr.write(terminalLines(`tunebench: saved baseline ${save}: ${path}\n`));
      }
    },
  };
}
