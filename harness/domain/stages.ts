// Stage results: what each stage kind keeps in run.json for the reports, the history and resume, and
// the measured values they hold (intervals, evidence). The list of kinds and the outcome union that is
// keyed on `kind` are in experiment/schema/stages.ts, beside each kind's spec.
import { z } from 'zod';
import { configSchema, paramValueSchema } from './params.js';
import { OUTCOMES } from './trial.js';
import { memoryGrowthSchema } from './memory.js';
import { stageNotesSchema } from './notes.js';
import {
  intervalSchema,
  latencyBoundSchema,
  linearFitSchema,
  logIntervalSchema,
  MAX_BATCH_STATUSES,
  ratioSchema,
  stageLoweringSchema,
  survivalSchema,
  firstHoldSchema,
  finalConfirmationSchema,
  maxFinalSchema,
  ARM_DECISIONS,
  SPEED_VERDICTS,
  MEMORY_VERDICTS,
} from './measures.js';

const num = z.number();
const numOrNull = z.number().nullable();

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
  notes: stageNotesSchema,
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
  strategy: z.enum(['power-bisect', 'shrink-on-oom']).optional(),
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
  notes: stageNotesSchema,
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
