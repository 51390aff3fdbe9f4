// The measured values that stage results hold (intervals, evidence, survivals) and the typed facts of a
// later stage failing at an earlier stage's batch. Stage notes (notes.ts) and results (stages.ts) are built on them.
import { z } from 'zod';
import { configSchema } from './params.js';
import { memoryGrowthSchema } from './memory.js';

const num = z.number();
const numOrNull = z.number().nullable();

/** A measured value with its confidence interval (`level`, e.g. 0.95). */
export const intervalSchema = z.object({ estimate: num, low: num, high: num, level: num });
export type Interval = z.infer<typeof intervalSchema>;

/** An interval on a ratio computed on the log scale, with the test behind it. */
export const logIntervalSchema = intervalSchema.extend({
  /** Two-sided p-value of "no change" (log-ratio 0); null for a single group's level. */
  p: numOrNull,
  /** Pairs, trials, or the smaller group. */
  n: num,
  df: num,
  /** Standard error of the mean log. */
  se: num,
  method: z.enum(['paired-t', 'log-t', 'pooled-log-t', 'welch-log-t']),
});
export type LogInterval = z.infer<typeof logIntervalSchema>;

/** A ratio as compare stages keep it: a log interval, or (runs written before the test was kept) only the interval. */
export const ratioSchema = intervalSchema.extend({
  p: numOrNull.optional(),
  n: num.optional(),
  df: num.optional(),
  se: num.optional(),
  method: logIntervalSchema.shape.method.optional(),
});

/** Why a value was chosen: the stage, the rule and the measurement behind it. */
export const evidenceSchema = z.object({
  stage: z.string(),
  rule: z.string(),
  /** 95% CI of the chosen value's throughput; null when fewer than 3 trials measured it. */
  samples_per_second: intervalSchema.nullable(),
  /** The measured samples/s when there is no CI (a max-batch probe is one trial). */
  point: num.optional(),
  trials: z.array(num),
});
export type Evidence = z.infer<typeof evidenceSchema>;

// ---- max-batch

export const MAX_BATCH_STATUSES = ['exact', 'ceiling', 'none-fits', 'failed'] as const;
export type MaxBatchStatus = (typeof MAX_BATCH_STATUSES)[number];

export const latencyLimitSchema = z.object({ quantile: z.enum(['p50', 'p95']), seconds: num });
export type LatencyLimit = z.infer<typeof latencyLimitSchema>;

export const latencyBoundSchema = latencyLimitSchema.extend({
  /** Largest tested batch meeting the limit, or null when none did. */
  batch: numOrNull,
  /** Smallest tested batch above it that broke the limit, or null when the max meets it. */
  firstViolating: numOrNull,
});
export type LatencyBound = z.infer<typeof latencyBoundSchema>;

export const linearFitSchema = z.object({
  intercept: num,
  slope: num,
  /** Largest absolute residual relative to the range of readings, 0 for an exact line. */
  relativeResidual: num,
  /** Residual standard error in bytes (0 with two readings, where it cannot be estimated). */
  sigma: num,
});
export type LinearFit = z.infer<typeof linearFitSchema>;

/** The longest run a batch survived: what its answer rests on, in the report's words. */
export const survivalSchema = z.object({
  batch: num,
  trial: num,
  steps: num,
  /** Epoch boundaries the run crossed; null when the workload reports no epochs. */
  epoch_boundaries: numOrNull,
  /** The other parameters of that run (the loader settings it survived with). */
  config: configSchema,
  statement: z.string(),
  /** Of a run until memory flattens: whether it did (absent: a fixed-length run, or a run before it was kept). */
  memory_growth: memoryGrowthSchema.optional(),
});
export type Survival = z.infer<typeof survivalSchema>;

/**
 * The first batch known to hold: the earliest run (in trial order) that ran until its memory flattened in
 * a fresh process, at a batch no larger than the max written, which passed every run of its own. Memory
 * grows with the batch, so it holds too; it is known long before the max is proven.
 */
export const firstHoldSchema = z.object({
  batch: num,
  trial: num,
  /** Seconds from the start of the stage's first trial to the end of this one. */
  after_seconds: num,
  /** Trials of the stage up to and including this one. */
  trials: num,
  memory_growth: memoryGrowthSchema,
});
export type FirstHold = z.infer<typeof firstHoldSchema>;

/** What the chosen batch's final confirmation showed, and what it changed. */
export const finalConfirmationSchema = z.object({
  /** The parameters whose final values differ from the ones the stage ran with. */
  changed: configSchema,
  /** The batch before the final confirmation, and the one written (lower when the first failed). */
  from: num,
  batch: numOrNull,
  outcome: z.enum(['ok', 'lowered', 'failed']),
  trials: z.array(num),
  survived: survivalSchema.optional(),
  statement: z.string(),
});
export type FinalConfirmation = z.infer<typeof finalConfirmationSchema>;

/**
 * The max is a fact about the config it was found with. When later stages changed other settings (workers,
 * prefetch, pinning), this says which, and whether the max itself ran with the written config: confirmed
 * (a confirmation-length pass), failed (an OOM there), or not measured.
 */
export const maxFinalSchema = z.object({
  max: num,
  /** The values the max was found with, of the parameters the written config changed. */
  found_with: configSchema,
  /** Their written values. */
  written: configSchema,
  outcome: z.enum(['confirmed', 'failed', 'not-measured']),
  trial: numOrNull,
});
export type MaxFinal = z.infer<typeof maxFinalSchema>;

/** Why a later stage could not run at a value an earlier stage chose (typed; the sentence is made where printed). */
export const stageFailureSchema = z.object({
  /** The later stage that failed. */
  stage: z.string(),
  /**
   * every-config-oom: every config of the stage ran out of memory at the value; oom-at-batch: some did, and
   * the stage chose nothing (a compare whose baseline OOMed cannot compare); chosen-config-oom: the config
   * the stage chose ran out of memory at the value in some of its trials (its choice was measured at a
   * batch that is not written).
   */
  kind: z.enum(['every-config-oom', 'oom-at-batch', 'chosen-config-oom']),
  /** The parameter an earlier stage chose, and the value the stage's configs ran out of memory at. */
  param: z.string(),
  batch: num,
  /** The stage that chose the value. */
  chosen_by: z.string(),
  /** Configs of the stage with at least one OOM at the value. */
  configs: num,
  /** oom-at-batch: the configs of the stage that ran (configs of them OOMed). */
  ran: num.optional(),
  /** chosen-config-oom: what the stage chose, and its trials at the value: all, and those that OOMed. */
  chosen: configSchema.optional(),
  trials: z.object({ ran: num, oom: num }).optional(),
});
export type StageFailure = z.infer<typeof stageFailureSchema>;

/** A later stage failed at the chosen batch: the batch was lowered under that stage's config and the stage ran again. */
export const stageLoweringSchema = z.object({
  failure: stageFailureSchema,
  /** The config the lowering ran with (the failed stage's cheapest config on top of the run's). */
  config: configSchema,
  /** The batch that held a confirmation-length run; null when none did. */
  batch: numOrNull,
  /** The lowest batch that failed in the lowering (or the stage's batch); exact when it is batch + multiple_of. */
  lowest_fail: num,
  trials: z.array(num),
  survived: survivalSchema.optional(),
  /**
   * Where the max-batch stage measured its band: the failure joined its runs, the band model placed the
   * batch, which passed `repeats` + 1 runs in a row; `risk` is the model's chance that a run at it fails.
   */
  band: z
    .object({
      repeats: num,
      risk: num.optional(),
      /** Failures the model, fitted with them, puts below max_risk: not explained by the batch (no risk then). */
      unexplained: z.array(num).optional(),
    })
    .optional(),
});
export type StageLowering = z.infer<typeof stageLoweringSchema>;

// ---- compare verdicts

export const ARM_DECISIONS = ['faster', 'slower', 'equivalent', 'undecided'] as const;
export type ArmDecision = (typeof ARM_DECISIONS)[number];
export const SPEED_VERDICTS = ['faster', 'slower', 'no significant difference'] as const;
export type SpeedVerdict = (typeof SPEED_VERDICTS)[number];
export const MEMORY_VERDICTS = ['less memory', 'more memory', 'no significant difference'] as const;
export type MemoryVerdict = (typeof MEMORY_VERDICTS)[number];
