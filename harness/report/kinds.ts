// What the reports need of each stage kind: the blocks of its section and its charts. A kind's module
// (engine/kinds/) provides them; the report writers are handed the table of every kind's.
import type { TrialRecord } from '../domain/index.js';
import type { StageKind, StageOutcomeOf, StageResults } from '../experiment/schema.js';
import type { Block } from './blocks.js';
import type { Chart } from './charts/spec.js';

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
