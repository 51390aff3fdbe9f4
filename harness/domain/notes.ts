// A stage's notes, typed: what happened and its figures. The sentence is made where a note is printed
// (report/notes.ts: the terminal, summary.md, report.html), so no code reads a note's wording. run.json
// of format 2 kept notes as sentences: they are read back as `text` notes (storedStageNoteSchema).
import { z } from 'zod';
import { paramValueSchema } from './params.js';
import { outcomeSchema, trialExceptionSchema } from './trial.js';
import { memoryGrowthSchema } from './memory.js';
import type { RoleKind } from './roles.js';
import {
  ARM_DECISIONS,
  MAX_BATCH_STATUSES,
  MEMORY_VERDICTS,
  ratioSchema,
  SPEED_VERDICTS,
  stageLoweringSchema,
} from './measures.js';

const num = z.number();
const numOrNull = z.number().nullable();
/** The trial's own reason for a timeout ("limits.timeout", a stop_after), null when it gave none. */
const timeoutReason = z.string().nullable();

/** The role kinds of a batch-size search's runs (search/probe.ts's ProbeRole); each is a trial role's kind. */
export const PROBE_ROLES = ['probe', 'confirm', 'throughput', 'recommended', 'latency', 'recipe', 'repeat'] as const;
// A search role that is not a trial role's kind does not build.
const probeRolesAreRoles: readonly RoleKind[] = PROBE_ROLES;
void probeRolesAreRoles;

/** What a note about the max-batch search says, with the figures its sentence needs. */
const maxBatchNotes = [
  /** A run timed out once: not evidence about memory, so it ran again and that run counts. */
  z.object({ kind: z.literal('timed-out-rerun'), batch: num, trial: num, role: z.enum(PROBE_ROLES) }),
  /** A batch passed its probe but failed its confirmation: from here probes ran until memory flattened. */
  z.object({ kind: z.literal('grows-with-steps'), batch: num, outcome: outcomeSchema, steps: num }),
  /** A batch timed out twice in a row: the search stopped rather than take it for a failure. */
  z.object({ kind: z.literal('search-stalled'), batch: num, reason: timeoutReason }),
  /** A failure that is not about size before anything passed: the workload is broken. */
  z.object({
    kind: z.literal('workload-broken'),
    batch: num,
    outcome: outcomeSchema,
    reason: z.string().nullable(),
    error: trialExceptionSchema.optional(),
  }),
  /** The smallest batch probed ran out of memory. */
  z.object({ kind: z.literal('none-fits'), smallest: num }),
  /** Every probe up to the ceiling fit. */
  z.object({ kind: z.literal('ceiling'), max: num }),
  /** The search made its most probes before the bracket closed. */
  z.object({ kind: z.literal('probe-limit'), probes: num }),
  /** The runs at the max did not show its memory flatten, so it is not called a max that holds. */
  z.object({ kind: z.literal('not-proven-to-hold'), batch: num, growth: memoryGrowthSchema }),
  /** A bound taken from a neighbouring bucket failed here: the bucket was searched from below. */
  z.object({ kind: z.literal('neighbour-bound-failed'), batch: num, outcome: outcomeSchema }),
  /** A boundary repeat timed out: left out of the band, and run again. */
  z.object({ kind: z.literal('repeat-timed-out'), batch: num, reason: timeoutReason }),
  /**
   * The repeats lowered the max: the old max failed one of them (`failed`), or passed every run but sits in
   * the band; `max` is the max written (null: none), `risk` the band model's figures when it has them.
   */
  z.object({
    kind: z.literal('max-lowered-by-repeats'),
    batch: num,
    failed: z.boolean(),
    max: numOrNull,
    risk: z.object({ risk: num, max_risk: num }).nullable(),
  }),
  /** No resident-memory readings: the recommended batch is a fraction of the max. */
  z.object({ kind: z.literal('recommended-by-fraction') }),
  /** No tested batch stayed under the requested headroom. */
  z.object({ kind: z.literal('headroom-not-kept') }),
  /** A batch below the max failed: memory is not monotone in batch size, or the limit is flaky. */
  z.object({ kind: z.literal('failed-below-max'), batch: num, outcome: outcomeSchema, max: num }),
  /** A batch below the max reaches within `tolerance` of the peak throughput. */
  z.object({ kind: z.literal('fastest-below-max'), fastest: num, tolerance: num, max: num }),
  /** No tested batch met the latency limit. */
  z.object({ kind: z.literal('latency-not-met'), quantile: z.enum(['p50', 'p95']), seconds: num }),
  /** A stage confirming another card's prediction: what was predicted here, and what was measured. */
  z.object({
    kind: z.literal('prediction-measured'),
    of_stage: z.string(),
    device: z.string(),
    predicted: numOrNull,
    measured: numOrNull,
    status: z.enum(MAX_BATCH_STATUSES),
  }),
] as const;

/** Notes of sweeps and compares. */
const armNotes = [
  /** A race ended early: the configs left are within the noise band of the leader. */
  z.object({ kind: z.literal('race-stopped'), rounds: num, left: num, band: num }),
  /** The stage's budget ran out. */
  z.object({ kind: z.literal('budget-ran-out'), trials: num, trial_seconds: num, rounds: num }),
  /** Configs with too few trials for their own CI: their CIs pool the spread over the stage's configs. */
  z.object({ kind: z.literal('pooled-intervals'), configs: num, min_trials: num, df: num }),
  /** Every config failed at least one trial, so nothing was chosen; the first failure with its cause. */
  z.object({
    kind: z.literal('nothing-chosen'),
    trials: num,
    failed: num,
    outcomes: z.array(outcomeSchema),
    first: z
      .object({ trial: num, outcome: outcomeSchema, reason: z.string(), error: trialExceptionSchema.optional() })
      .nullable(),
  }),
  /** A swept parameter that does nothing on this machine (pin_memory without a GPU). */
  z.object({ kind: z.literal('inert-param'), param: z.string(), why: z.literal('no-gpu') }),
  /** An arm (null: the baseline) failed before any successful trial: it is not run again. */
  z.object({ kind: z.literal('arm-failed-early'), arm: z.string().nullable(), outcome: outcomeSchema }),
  /** A compare arm against the baseline: its verdict, how it was decided, and its ratios. */
  z.object({
    kind: z.literal('arm-verdict'),
    param: z.string(),
    value: paramValueSchema,
    baseline: paramValueSchema,
    verdict: z.enum(SPEED_VERDICTS),
    decision: z.enum(ARM_DECISIONS).nullable(),
    decided_at: numOrNull,
    band: num,
    throughput_ratio: ratioSchema.nullable(),
    memory_ratio: ratioSchema.nullable(),
    memory_verdict: z.enum([...MEMORY_VERDICTS, 'not measured']),
  }),
  /** A compare arm with nothing to compare: it, or the baseline, has no successful trial. */
  z.object({
    kind: z.literal('arm-not-compared'),
    param: z.string(),
    value: paramValueSchema,
    baseline: paramValueSchema,
    baseline_failed: z.boolean(),
  }),
  /** How a compare's CIs are to be read: sequential, alpha split over the arms and spent over the looks. */
  z.object({ kind: z.literal('sequential-cis'), arms: num }),
  /** The arms never called empty_cache(): the policies differ in name only here (`flagged`: arms that differed). */
  z.object({ kind: z.literal('name-only'), param: z.string(), flagged: z.array(paramValueSchema) }),
  /** The compare's baseline has no successful trial: nothing was chosen. */
  z.object({ kind: z.literal('baseline-failed'), param: z.string(), baseline: paramValueSchema }),
] as const;

export const stageNoteSchema = z.discriminatedUnion('kind', [
  ...maxBatchNotes,
  ...armNotes,
  /** A later stage failed at this batch, and the batch was lowered (or nothing held). */
  z.object({ kind: z.literal('batch-lowered'), param: z.string(), lowering: stageLoweringSchema }),
  /** A claim's noise warning about one side's measurements (worded by stats/noise.ts). */
  z.object({
    kind: z.literal('noise'),
    warning: z.object({
      kind: z.enum(['high-spread', 'very-high-spread', 'slow-first-trial', 'outlier']),
      message: z.string(),
    }),
  }),
  /** A note of a run.json of format 2, which kept notes as sentences. */
  z.object({ kind: z.literal('text'), text: z.string() }),
]);
export type StageNote = z.infer<typeof stageNoteSchema>;
export type StageNoteKind = StageNote['kind'];
/** One kind of note with its figures. */
export type NoteOf<K extends StageNoteKind> = Extract<StageNote, { kind: K }>;

/** Notes as run.json holds them: typed, or (format 2) sentences, read as `text` notes. */
export const stageNotesSchema = z.array(
  z.union([stageNoteSchema, z.string().transform((text): StageNote => ({ kind: 'text', text }))]),
);
