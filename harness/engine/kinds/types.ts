// A stage kind as one module: the record of everything tunebench does differently for it, from the
// checks of its spec to its runner, its report, its failures and what the history keeps of it. The
// table of every kind's module (index.ts) is a mapped type over the kinds, so the compiler names what
// a new kind lacks.
import type { Config, ParamValue, TrialRecord } from '../../domain/index.js';
import type { KindChecks, SpecOf } from '../../experiment/kinds.js';
import type { ClaimStageSpec, StageKind, StageOutcomeOf } from '../../experiment/schema.js';
import type { KindReport } from '../../report/kinds.js';
import type { Frozen } from '../../util/frozen.js';
import type { StageInput } from '../context.js';

/**
 * Which result of its stage a key metric is: the typed fact behind its name, for the code that goes
 * back from a metric to the trials that measured it (history/confirm-source.ts).
 */
export type MetricOrigin =
  | { kind: 'max' }
  | { kind: 'chosen-batch' }
  | { kind: 'chosen-config' }
  | { kind: 'arm'; value: ParamValue }
  | { kind: 'speedup' };

/**
 * A key metric of a stage as its kind gives it: `what` it is ("samples/s (chosen config)"; the history
 * names it "<stage> <what>", with "samples/s" as runs/s for process-timed stages), its value and CI.
 */
export interface KindMetric {
  what: string;
  origin: MetricOrigin;
  /** 'samples' for a count; absent: a rate (or "x" for a speedup). */
  unit?: 'samples';
  value: number;
  low: number | null;
  high: number | null;
}

/** What to run again for a metric: a config of tonight's and the reference's run, or a claim stage. */
export type Source =
  | {
      kind: 'config';
      config: Config;
      trials: number;
      /** The `steps` of the stage that measured the config, given to the confirmation stage. */
      steps: number | undefined;
      /** The arm's own program and arguments (a compare stage's `commands`, e.g. `tunebench time`'s). */
      command?: string[];
    }
  | { kind: 'claim'; stage: ClaimStageSpec; config: Config; trials: number };

/** A stage kind's module. */
export interface StageKindModule<K extends StageKind> extends KindChecks<K>, KindReport<K> {
  /** Runs a stage: its frozen input and spec in, its outcome out. */
  run: (input: StageInput, spec: Frozen<SpecOf<K>>, name: string) => Promise<StageOutcomeOf<K>>;
  /** About how many trials the stage runs, from its spec alone: what the run's ETA multiplies. */
  plannedTrials: (spec: SpecOf<K>) => number;
  /**
   * Whether the stage failed by its kind's rule (a max batch that nothing fits, a sweep that chose
   * nothing while configs failed): later stages cannot run, and the run exits 2. A stage all of whose
   * trials failed has failed whatever its kind.
   */
  failed: (outcome: Frozen<StageOutcomeOf<K>>) => boolean;
  /** How its trials fail at a batch an earlier stage chose (engine/stages/lower-after-failure.ts). */
  failureAtBatch: {
    /** Its trials grouped by the config they ran. */
    groups: (outcome: Frozen<StageOutcomeOf<K>>, records: readonly TrialRecord[]) => TrialRecord[][];
    /** Whether a config fails as a whole when one of its trials fails at the batch (a sweep's row). */
    wholeConfigs: boolean;
    /** The config to lower the batch with when every config failed; null: the run's config. */
    lightest: (outcome: Frozen<StageOutcomeOf<K>>, spec: Frozen<SpecOf<K>>) => Config | null;
  };
  /** The key metrics the history keeps of the stage. */
  keyMetrics: (outcome: StageOutcomeOf<K>) => KindMetric[];
  /**
   * What a confirmation runs again for one of its key metrics (`origin`): the config that measured
   * it (`configOf` finds the config of trials by index), or the claim; null when the run lacks it.
   */
  source: (
    outcome: StageOutcomeOf<K>,
    spec: SpecOf<K>,
    origin: MetricOrigin,
    configOf: (indices: readonly number[]) => Config | null,
  ) => Source | null;
}

/** Every stage kind's module. */
export type StageKindModules = { readonly [K in StageKind]: StageKindModule<K> };
