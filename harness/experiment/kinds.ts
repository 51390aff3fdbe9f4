// What the experiment's checks need of each stage kind: its checks across fields, and how it runs the
// workload (the parameters it gives values and the commands it runs), for the command template checks.
// A kind's module (engine/kinds/) provides them; the loader is handed the table of every kind's.
import type { Issue } from './issues.js';
import type { Experiment, StageKind, StageSpec } from './schema.js';

/** Each stage kind's spec. */
export type SpecOf<K extends StageKind> = Extract<StageSpec, { kind: K }>;

/** Whether a parameter has a value in every config of a stage, or only in some (a conditional one). */
export interface Known {
  always: boolean;
  /** Why it may be absent: "applies_when leaves it out where num_workers is 0 (stages[1])". */
  why?: string;
}

/** One way a stage runs the workload: the stage as a whole, or one side of a claim. */
export interface WorkloadRun {
  /** The side for messages ("baseline side"); absent for the stage as a whole. */
  side?: string;
  /** The parameters this run gives values, each with whether every config of it has one. */
  varied: ReadonlyMap<string, Known>;
  /** Its own programs with their paths in the file ([path, argv]): a compare's per-arm commands. */
  commands: readonly (readonly [string, readonly string[]])[];
  /** Whether it (also) runs workload.command. */
  usesDefault: boolean;
}

/** How a stage runs a command workload. */
export interface StageUse {
  runs: readonly WorkloadRun[];
  /** Whether later stages see the values it varies (its chosen config); a claim's sides are its own. */
  passesOn: boolean;
  /** The values the file gives parameters in this stage, [path, parameter, value]: the flag check reads them. */
  values: readonly (readonly [string, string, unknown])[];
  /** Parameters that some of its configs leave out (a sweep's applies_when). */
  conditional: readonly string[];
}

/** A stage kind's part in the experiment's checks. */
export interface KindChecks<K extends StageKind> {
  /** Problems across fields of the stage at stages[i] (and of the experiment around it), pushed to `issues`. */
  check: (e: Experiment, stage: SpecOf<K>, i: number, issues: Issue[]) => void;
  /** How the stage at stages[i] runs the workload. */
  use: (stage: SpecOf<K>, i: number) => StageUse;
}

/** The checks of every stage kind, as the loader is handed them. */
export type ExperimentKinds = { readonly [K in StageKind]: KindChecks<K> };

/** The stage kind's checks of one stage (kind and spec together, as the compiler keeps them). */
export function checkStage<K extends StageKind>(
  kinds: ExperimentKinds,
  kind: K,
  ...args: [e: Experiment, stage: SpecOf<K>, i: number, issues: Issue[]]
): void {
  kinds[kind].check(...args);
}

/** How one stage runs the workload, by its kind. */
export function stageUse<K extends StageKind>(kinds: ExperimentKinds, kind: K, stage: SpecOf<K>, i: number): StageUse {
  return kinds[kind].use(stage, i);
}
