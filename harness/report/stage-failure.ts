// The sentences of the typed stage failures and lowerings (domain/stages.ts), for the CLI and the reports.
import type { StageFailure, StageLowering } from '../domain/index.js';

const what = (param: string) => (param === 'batch_size' ? 'batch' : param);

/** "stage loader: every config OOMed at batch 200". */
export function failureHead(f: StageFailure): string {
  return `stage ${f.stage}: every config OOMed at ${what(f.param)} ${f.batch}`;
}

/** A failure no lowering rescued, as the CLI and the summary say it. */
export function stageFailureSentence(f: StageFailure): string {
  return (
    `${failureHead(f)}, the ${f.param} that ${f.chosen_by} chose, and no lower ${f.param} held under the ` +
    `stage's cheapest config: no ${f.param} is written, and the stages after ${f.stage} did not run`
  );
}

/** One lowering caused by a later stage, as the max-batch section of the report says it. */
export function loweringSentence(l: StageLowering): string {
  const f = l.failure;
  if (l.batch === null)
    return `${failureHead(f)}; no lower ${f.param} held under its cheapest config in ${l.trials.length} trials`;
  return (
    `${failureHead(f)}; lowered to ${l.batch} (${l.lowest_fail} failed) under its cheapest config, which ` +
    `${l.survived?.statement ?? 'held'}; the stage ran again at ${l.batch}`
  );
}
