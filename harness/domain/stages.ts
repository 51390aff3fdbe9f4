// Stage results: what each stage kind keeps in run.json for the reports, the history and resume, and
// the measured values they hold (intervals, evidence). The list of kinds and the outcome union that is
// keyed on `kind` are in experiment/schema/stages.ts, beside each kind's spec.
import { z } from 'zod';
import { configSchema, paramValueSchema } from './params.js';
import { OUTCOMES } from './trial.js';
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

/** The boundary measured again: the max and the batch above it, each repeated under identical runs. */
export const boundaryBandSchema = z.object({
  /** Runs of each boundary batch (after the one that placed it). */
  repeats: num,
  /** Largest batch that passed every run. */
  passed_all: numOrNull,
  /** Batches that passed some runs and failed others: the band where the limit moves between runs. */
  failed_some: z.array(z.object({ batch: num, passed: num, failed: num })),
  /** Smallest batch that failed every run; null when none was repeated or each passed at least once. */
  failed_all: numOrNull,
  /** The steps each repeat ran (null: the stage's probe steps). */
  steps: numOrNull,
  /**
   * The band model (harness/search/band-model.ts) over every run of that length, for the max written:
   * its chance of failing a run (`risk`, at most `max_risk`) and a run's limit, mean and spread in samples.
   * Absent when no run failed (no band to model) and in runs made before the model.
   */
  model: z.object({ runs: num, limit: num, spread: num, risk: num, max_risk: num }).optional(),
  /**
   * Every run of that length the stage made, passes and OOMs counted by batch: the model's evidence, which a
   * lowering after a later failure fits again with that failure. Absent in runs made before it was kept.
   */
  runs: z.array(z.object({ batch: num, passed: num, failed: num })).optional(),
});
export type BoundaryBand = z.infer<typeof boundaryBandSchema>;

/** One bucket of a bucketed max-batch stage (a sequence length and its answers). */
export const bucketRowSchema = z.object({
  value: num,
  status: z.enum(MAX_BATCH_STATUSES),
  max: numOrNull,
  smallestFail: numOrNull,
  recommended: numOrNull,
  /** The batch written to the bucket map (by the stage's choose rule). */
  chosen: numOrNull,
  /** chosen x value: the tokens a batch of this bucket holds. */
  tokens: numOrNull,
  probesToMax: num,
  confirmed: z.boolean(),
  survived: survivalSchema.optional(),
  notes: z.array(z.string()),
});

export const bucketsSummarySchema = z.object({
  param: z.string(),
  /** Longest first, the order they were searched in. */
  rows: z.array(bucketRowSchema),
  /** Search probes and failed confirmations of every bucket. */
  probes_total: num,
  /** The model across buckets: bytes = a + b*batch*len + c*batch*len^2 (null with too few readings). */
  model: z.object({ a: num, b: num, c: num, sigma: num }).nullable(),
});
export type BucketsSummary = z.infer<typeof bucketsSummarySchema>;

/** The training recipe kept: the batch and accumulation steps that make the effective batch, and LR rules. */
export const recipeSchema = z.object({
  effective_batch: num,
  batch: numOrNull,
  accumulation_steps: numOrNull,
  ranks: num,
  accumulation_param: z.string(),
  /** The stage's batch before the recipe (the largest the recipe may use). */
  from: numOrNull,
  trials: z.array(num),
  statement: z.string(),
  lr: z
    .object({ base_lr: num, base_batch: num, effective_batch: num, linear: num, sqrt: num, statement: z.string() })
    .optional(),
});
export type Recipe = z.infer<typeof recipeSchema>;

/** Max batch predicted for other cards from the fitted memory (fixed + per sample): predictions, not measurements. */
export const cardPredictionsSchema = z.object({
  /** What the fit was made on: the workload's device memory, or host RSS. */
  quantity: z.string(),
  /** The fit is of device memory (a GPU workload's allocator peak) rather than host RSS (absent in older runs). */
  of_device: z.boolean().optional(),
  /**
   * Shown in the report: by default only a fit of device memory (a card's max from a CPU job's host RSS means
   * nothing); predict_cards: true shows it anyway, false never. Absent in older runs: shown.
   */
  shown: z.boolean().optional(),
  fixed_bytes: num,
  per_sample_bytes: num,
  rows: z.array(
    z.object({
      card: z.string(),
      bytes: num,
      predicted: numOrNull,
      rule_of_thumb: num,
      measured: numOrNull.optional(),
    }),
  ),
  statement: z.string(),
});
export type CardPredictions = z.infer<typeof cardPredictionsSchema>;

/** A max-batch stage with predicted_by: an earlier stage's prediction for this device, against the max measured here. */
export const deviceConfirmationSchema = z.object({
  /** The stage whose memory line made the prediction. */
  of_stage: z.string(),
  /** The device class the probes ran on (the GPU name, or the CPU model without one). */
  device: z.string(),
  host: z.string(),
  /** The device's memory (GPU memory.total; without a GPU, limits.memory); null when unknown. */
  memory_bytes: numOrNull,
  /** Null when the earlier stage made no prediction, or the memory is unknown. */
  predicted: numOrNull,
  /** The max measured here (exact when status is "exact"). */
  measured: numOrNull,
  status: z.enum(MAX_BATCH_STATUSES),
  /** Trials to the exact max on this device. */
  probes: num,
});
export type DeviceConfirmation = z.infer<typeof deviceConfirmationSchema>;

export const maxBatchSummarySchema = z.object({
  status: z.enum(MAX_BATCH_STATUSES),
  /** Largest batch that ran (exact when status is "exact"; the ceiling when "ceiling"). */
  max: numOrNull,
  largestOk: numOrNull,
  smallestFail: numOrNull,
  /** Trials until both bounds were known: search probes and failed confirmations. */
  probesToMax: num,
  /** How the probes placed the boundary (absent: tunebench's own search, and runs before strategies). */
  strategy: z.enum(['power-bisect']).optional(),
  /** The max ran until its memory flattened: a max that holds. */
  confirmed: z.boolean(),
  /** What the longest run at the max showed of its memory (absent in runs before it was kept). */
  memoryGrowth: memoryGrowthSchema.nullable().optional(),
  recommended: numOrNull,
  fastest: numOrNull,
  peakSamplesPerSecond: numOrNull,
  latencyBound: latencyBoundSchema.optional(),
  fit: linearFitSchema.optional(),
  log: z.array(z.string()),
  notes: z.array(z.string()),
  /** Per answer (max, recommended, fastest): the longest ok run at that batch (absent in runs before it was kept). */
  survived: z
    .object({
      max: survivalSchema.optional(),
      recommended: survivalSchema.optional(),
      fastest: survivalSchema.optional(),
    })
    .default({}),
  /** The chosen batch run again with the final config of the whole run (later stages' choices). */
  final_confirmation: finalConfirmationSchema.optional(),
  /** The max against the config that was written, when later stages changed other settings (absent: none changed). */
  max_final: maxFinalSchema.optional(),
  param: z.string(),
  multiple_of: num,
  ceiling: num,
  cap_bytes: numOrNull,
  headroom: num,
  chosen: numOrNull,
  choose_rule: z.string(),
  buckets: bucketsSummarySchema.optional(),
  recipe: recipeSchema.optional(),
  predictions: cardPredictionsSchema.optional(),
  /** The memory cap the max was found under: cgroup-v1/v2 (the whole trial tree's real memory), prlimit-as, none. */
  cap_mechanism: z.string().optional(),
  /** The card's memory the search worked against (a GPU run without limits.memory): what limits device memory. */
  card_bytes: num.optional(),
  /** repeat_boundary: the max and the batch above it run again; the max written passed every run. */
  band: boundaryBandSchema.optional(),
  /** The first batch known to hold, and when (absent when none held, and in runs before it was kept). */
  first_hold: firstHoldSchema.optional(),
  /** Later stages that failed at the chosen batch, and the lowering each caused. */
  lowered_after: z.array(stageLoweringSchema).optional(),
  device_confirmation: deviceConfirmationSchema.optional(),
});
export type MaxBatchSummary = z.infer<typeof maxBatchSummarySchema>;

// ---- sweep

export const deviceChoiceSchema = z.object({
  device: z.string(),
  hosts: z.array(z.string()),
  /** The chosen config's key on this device class, and its throughput there. */
  chosen_key: z.string().nullable(),
  config: configSchema.nullable(),
  throughput: intervalSchema.nullable(),
  trials: num,
  note: z.string().nullable(),
});
export type DeviceChoice = z.infer<typeof deviceChoiceSchema>;

export const sweepConfigRowSchema = z.object({
  key: z.string(),
  config: configSchema,
  status: z.enum(['finished', 'eliminated', 'failed', 'unfinished', 'pruned']),
  why: z.string().optional(),
  trials: z.array(num),
  throughput: intervalSchema.nullable(),
  stall_fraction: numOrNull,
});
export type SweepConfigRow = z.infer<typeof sweepConfigRowSchema>;

export const sweepSummarySchema = z.object({
  strategy: z.enum(['race', 'grid']),
  params: z.array(z.string()),
  configs: z.array(sweepConfigRowSchema),
  chosen_key: z.string().nullable(),
  tied: z.array(z.string()),
  trials: num,
  trial_seconds: num,
  budget_exhausted: z.boolean(),
  /** Parameters swept that do nothing here (pin_memory without a GPU): their values measure the same work. */
  inert: z.array(z.object({ param: z.string(), why: z.literal('no-gpu') })).optional(),
  /** Trials that ran in SLURM jobs: the chosen config of each device class, from its own trials. */
  by_device: z.array(deviceChoiceSchema).optional(),
});
export type SweepSummary = z.infer<typeof sweepSummarySchema>;

// ---- compare

export const ARM_DECISIONS = ['faster', 'slower', 'equivalent', 'undecided'] as const;
export type ArmDecision = (typeof ARM_DECISIONS)[number];
export const SPEED_VERDICTS = ['faster', 'slower', 'no significant difference'] as const;
export type SpeedVerdict = (typeof SPEED_VERDICTS)[number];
export const MEMORY_VERDICTS = ['less memory', 'more memory', 'no significant difference'] as const;
export type MemoryVerdict = (typeof MEMORY_VERDICTS)[number];

export const compareArmRowSchema = z.object({
  value: paramValueSchema,
  baseline: z.boolean(),
  trials: z.array(num),
  ok_trials: num,
  failures: z.partialRecord(z.enum(OUTCOMES), num),
  /** Why the arm stopped early, when it did. */
  stopped: z.string().optional(),
  /** Geometric mean over trials of each trial's samples/s, with a 95% CI (3 trials or more). */
  throughput: intervalSchema.nullable(),
  /**
   * Geometric mean over trials of each trial's peak memory in bytes (the device's when reported,
   * else RSS of the process tree), 95% CI with 3 trials or more.
   */
  peak_memory: intervalSchema.nullable(),
  stall_fraction: numOrNull,
  /**
   * Arm / baseline over the rounds where both ran, with the sequential CI of the look that decided;
   * null for the baseline.
   */
  throughput_ratio: ratioSchema.nullable(),
  memory_ratio: ratioSchema.nullable(),
  /** Two-sided p-values of "no change" at that look (paired t on per-round log-ratios). */
  throughput_p: numOrNull,
  memory_p: numOrNull,
  /**
   * faster / slower / equivalent (within the noise band) / undecided when the rounds or the budget
   * ran out (absent in runs before sequential compares).
   */
  decision: z.enum([...ARM_DECISIONS, 'baseline', 'failed']).optional(),
  /** Rounds measured when the arm was decided. */
  decided_at: numOrNull.optional(),
  verdict: z.enum([...SPEED_VERDICTS, 'baseline', 'failed']),
  /** What the Python adapter reported about the policy: calls to empty_cache() and their time, per trial (medians). */
  empty_cache: z.object({ calls: num, seconds: num }).optional(),
  memory_verdict: z.enum([...MEMORY_VERDICTS, 'baseline', 'failed', 'not measured']),
});
export type CompareArmRow = z.infer<typeof compareArmRowSchema>;

export const compareSummarySchema = z.object({
  param: z.string(),
  baseline: paramValueSchema,
  noise_band: num,
  arms: z.array(compareArmRowSchema),
  rounds: num,
  trials: num,
  trial_seconds: num,
  budget_exhausted: z.boolean(),
  chosen: paramValueSchema,
});
export type CompareSummary = z.infer<typeof compareSummarySchema>;

// ---- claim

export const CLAIM_METRICS = ['throughput', 'step_time', 'process_time', 'peak_memory'] as const;
export type ClaimMetric = (typeof CLAIM_METRICS)[number];
export const CLAIM_VERDICTS = ['confirmed', 'falls short', 'exceeds', 'inconclusive'] as const;
export type ClaimVerdict = (typeof CLAIM_VERDICTS)[number];

export const claimSummarySchema = z.object({
  claim: z.string(),
  source: z.string().nullable(),
  metric: z.enum(CLAIM_METRICS),
  band: z.object({ low: num, high: numOrNull, one_sided: z.boolean() }),
  baseline: configSchema,
  candidate: configSchema,
  verdict: z.enum([...CLAIM_VERDICTS, 'skipped']),
  reason: z.string(),
  speedup: logIntervalSchema.nullable(),
  p: numOrNull,
  pairs: num,
  looks: num,
  trials: z.object({ baseline: z.array(num), candidate: z.array(num) }),
  warnings: z.array(z.string()),
  sentence: z.string(),
});
export type ClaimSummary = z.infer<typeof claimSummarySchema>;
