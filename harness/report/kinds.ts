// What the reports need of each stage kind: the blocks of its section and its charts. A kind's module
// (engine/kinds/) provides them; the report writers are handed the table of every kind's.
import type { TrialRecord } from '../domain/index.js';
import type { StageKind, StageOutcome, StageOutcomeOf, StageResults } from '../experiment/schema.js';
import type { Frozen } from '../util/frozen.js';
import type { Block } from './blocks.js';
import type { Chart } from './charts/spec.js';
import type { KindAnswer, StageAnswer } from './answers.js';

/** A stage kind's part in the reports. */
export interface KindReport<K extends StageKind> {
  /** The kind's blocks of its stage's section: [the answer's, the details']. */
  blocks: (result: StageResults[K], records: readonly TrialRecord[]) => [Block[], Block[]];
  /** Its charts from its stage's trials (`own`), and the trial whose telemetry the section draws. */
  charts: (
    name: string,
    result: StageResults[K],
    own: readonly TrialRecord[],
  ) => { charts: Chart[]; representative: TrialRecord | undefined };
  /** Its answer in one line and its verdict word(s): the terminal's and `--json`'s (answers.ts). */
  answer: (result: Frozen<StageResults[K]>) => KindAnswer;
}

/** The report parts of every stage kind, as the report writers are handed them. */
export type ReportKinds = { readonly [K in StageKind]: KindReport<K> };

/** The kind's blocks of one stage. */
export function kindBlocks<K extends StageKind>(
  kinds: ReportKinds,
  stage: StageOutcomeOf<K>,
  records: readonly TrialRecord[],
): [Block[], Block[]] {
  return kinds[stage.kind].blocks(stage.result, records);
}

/** The kind's charts of one stage. */
export function kindCharts<K extends StageKind>(
  kinds: ReportKinds,
  stage: StageOutcomeOf<K>,
  own: readonly TrialRecord[],
): { charts: Chart[]; representative: TrialRecord | undefined } {
  return kinds[stage.kind].charts(stage.name, stage.result, own);
}

/** The kind's answer of one stage, named (report/answers.ts). */
export function kindAnswer(kinds: ReportKinds, stage: Frozen<StageOutcome>): StageAnswer {
  return { stage: stage.name, kind: stage.kind, ...answerOfKind(kinds, stage.kind, stage.result) };
}

// Of one kind, the answer of that kind's result; the overload states what the compiler cannot follow through K.
function answerOfKind<K extends StageKind>(kinds: ReportKinds, kind: K, result: Frozen<StageResults[K]>): KindAnswer {
  return kinds[kind].answer(result);
}
