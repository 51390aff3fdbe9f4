// What may have biased a run's measurements, for the terminal: each stage's foreign load and a
// claim's noise warnings. `run`, `time` and `claim` print the same lines.
import { foreignLoadWarning } from './foreign-load.js';
import type { TrialRecord } from '../domain/index.js';
import type { RunResult } from '../experiment/run-file.js';

/** One line per warning, in stage order: the stage's foreign load, then a claim's noise warnings. */
export function stageWarnings(result: RunResult, records: readonly TrialRecord[]): string[] {
  return result.stages.flatMap((stage) => {
    const load = foreignLoadWarning(
      stage.kind,
      records.filter((r) => r.stage === stage.name),
    );
    const noise = stage.kind === 'claim' ? stage.result.warnings : [];
    const named = (w: string) => (result.stages.length > 1 ? `stage ${stage.name}: ${w}` : w);
    return [...(load ? [load] : []), ...noise].map(named);
  });
}
