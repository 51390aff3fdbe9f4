// The stages of an experiment: max-batch, sweep, compare and claim, told apart by `kind`: what each
// kind's spec holds, and the list of kinds with the outcome union that run.json keeps.
import { z } from 'zod';
import {
  bool,
  bounds,
  duration,
  either,
  fraction,
  list,
  nonNegativeInt,
  num,
  object,
  oneOf,
  paramName,
  paramRecord,
  paramValue,
  positiveInt,
  record,
  size,
  str,
} from '../fields.js';
import {
  claimSummarySchema,
  compareSummarySchema,
  configSchema,
  evidenceSchema,
  maxBatchSummarySchema,
  stageNotesSchema,
  sweepSummarySchema,
} from '../../domain/index.js';

/** A sweep's `repeats` when not given: trials per config of a grid, the most rounds of a race. */
export const SWEEP_REPEATS = { grid: 3, race: 8 } as const;

const stageName = str().optional();
const stepsOverride = positiveInt('timed steps per trial (default measure.steps)').optional();

const warmupTrials = nonNegativeInt(
  'untimed trials of each arm before the first timed one (file caches, JIT, lazy imports); not used in any statistic',
).default(0);

const budget = object({
  trials: positiveInt('stop after this many trials').optional(),
  seconds: duration('stop after this much trial time').optional(),
});

export const maxBatchStage = object(
  {
    kind: z.literal('max-batch'),
    name: stageName,
    param: paramName('a parameter name such as "batch_size"').default('batch_size'),
    multiple_of: positiveInt('granularity of the answer').default(8),
    start: positiveInt('first probe; defaults to multiple_of').optional(),
    ceiling: positiveInt('largest batch the search may probe').default(1 << 20),
    steps: positiveInt('full steps a probe must survive').default(3),
    confirm_steps: nonNegativeInt(
      'least steps of the confirmation run at the max (it runs on until memory stops growing, up to ' +
        'confirm_max_steps), and the steps of the final confirmation with the final config; 0 skips both',
    ).default(50),
    confirm_max_steps: positiveInt(
      'most steps a confirmation runs while its memory still grows; a max whose memory has not flattened by then ' +
        'is reported as still growing, never as a max that holds',
    ).default(200),
    confirm_epochs: positiveInt(
      'epochs the confirmation runs span (2: one epoch boundary, where a DataLoader starts its workers again)',
    ).default(2),
    final_confirm: oneOf(
      ['auto', 'off'] as const,
      'auto: when later stages change other parameters, ' +
        'the chosen batch runs a confirmation with the final config before it is written',
    ).default('auto'),
    headroom: fraction('memory fraction kept free by the recommended batch').default(0.1),
    tolerance: fraction('fastest: smallest batch within this fraction of peak samples/s').default(0.05),
    throughput_points: nonNegativeInt('extra batch sizes measured for the throughput curve').default(4),
    repeat_boundary: nonNegativeInt(
      'runs of the smallest failing batch and of the max written after the search, as long as the confirmation: a ' +
        'band model of every such run places the max below the band (max_risk), and the boundary is reported as a band; 0 skips it',
    ).default(2),
    max_risk: num(
      { exclusiveMin: 0, max: 0.5 },
      "the chance of failing a run that the max written may have, by the band model of the boundary's runs " +
        '(repeat_boundary); smaller costs a wider margin below the band',
    ).default(0.02),
    predict_cards: bool(
      "show the max batch predicted on other cards (16-141 GB) from the probes' memory line; default: only when " +
        'the line is of device memory (a GPU workload), not from host RSS of a CPU job',
    ).optional(),
    bracket: oneOf(
      ['auto', 'in-process', 'fresh'] as const,
      'in-process: attempts in one process of the workload place the boundary (a pass there is a lower bound, ' +
        'an OOM a hint), then fresh processes confirm the max and fail the next multiple; fresh: every probe is a ' +
        'fresh process; auto: in-process for a warm-started (warm_start: fork) workload on a GPU machine',
    ).default('auto'),
    strategy: oneOf(
      ['tunebench', 'power-bisect', 'shrink-on-oom'] as const,
      'how the probes place the boundary before the confirmation: tunebench (grow from start, guided by the ' +
        'memory line, placed by what probes cost), power-bisect (Lightning BatchSizeFinder mode binsearch: double ' +
        'from start until a failure, then bisect) or shrink-on-oom (Accelerate find_executable_batch_size: from ' +
        "start, x0.9 after each OOM until one runs; then bisected to exact); each answer is confirmed and repeated like tunebench's own",
    ).default('tunebench'),
    place_by: oneOf(
      ['time', 'count'] as const,
      'time: probes are placed by what they have cost (cheap OOMs draw them up), so the sequence depends on ' +
        'measured times; count: by bisection alone, the same sequence on every run',
    ).default('time'),
    choose: oneOf(
      ['recommended', 'max', 'fastest'] as const,
      'the batch later stages use: recommended (keeps the headroom), ' +
        'max, or fastest (smallest within tolerance of the peak samples/s)',
    ).default('recommended'),
    buckets: object(
      {
        param: paramName('the parameter that sets the bucket, such as "seq_len"'),
        values: list(positiveInt(), { min: 2, description: 'the bucket values, such as sequence lengths' }),
      },
      'a max batch per bucket (sequence length): every value is searched, longest first, each starting from ' +
        "its longer neighbour's max and guided by one memory model a + b*batch*len + c*batch*len^2; the chosen " +
        'config writes the bucket -> batch map (chosen-config.buckets.json)',
    ).optional(),
    keep_effective_batch: positiveInt(
      'the effective batch to keep: the chosen config becomes the largest batch that fits and divides it, ' +
        'with gradient accumulation steps making up the rest (batch x steps x ranks = this)',
    ).optional(),
    accumulation_param: paramName('the parameter that receives the gradient accumulation steps').default(
      'gradient_accumulation_steps',
    ),
    base_lr: num({ exclusiveMin: 0 }, 'the learning rate the recipe was tuned with, at base_batch').optional(),
    base_batch: positiveInt('the effective batch that base_lr was tuned with').optional(),
    constraint: str({
      description:
        "SLURM only: this stage's allocation goes to nodes with this feature (sbatch --constraint), " +
        'instead of executor.constraint',
    }).optional(),
    predicted_by: str({
      description:
        "the name of an earlier max-batch stage whose memory line (fixed + per-sample bytes) this stage confirms on its own device: it measures the exact max there, guided by that stage's prediction, and chooses nothing",
    }).optional(),
  },
  'Finds the largest batch that runs without OOM under the cap, plus recommended and fastest.',
);

const paramSpace = either(
  [
    list(paramValue, { min: 1, description: 'the values to try' }),
    object(
      { range: bounds(num()), step: num({ exclusiveMin: 0 }).optional() },
      'numbers from range[0] to range[1] by step (default 1)',
    ),
    object({ pow2: bounds(num({ exclusiveMin: 0 })) }, 'powers of two from pow2[0] to pow2[1]'),
  ],
  'a list of values, { range: [low, high], step } or { pow2: [low, high] }',
);

const expression = either([
  num(),
  str({
    pattern: /^[-+*/() .0-9A-Za-z_]+$/,
    hint: 'an arithmetic expression of parameter names, such as "num_workers + intra_op_threads"',
  }),
]);

const sweepConstraints = object({
  cpus: object(
    {
      uses: expression,
      max: expression,
      main: nonNegativeInt(
        'CPUs of the main process (the model or training loop), counted on top of uses; ' +
          'default 1, or 0 when uses names intra_op_threads',
      ).optional(),
    },
    'prune configs where uses + main exceeds max; "cpus" in max is SLURM_CPUS_PER_TASK or the cores available',
  ).optional(),
  memory: object(
    { uses: expression, max: size('memory budget') },
    'prune configs whose estimated bytes exceed max',
  ).optional(),
});

export const sweepStage = object(
  {
    kind: z.literal('sweep'),
    name: stageName,
    params: paramRecord(paramSpace, 'parameter name to the values to sweep'),
    strategy: oneOf(
      ['race', 'grid'] as const,
      'grid runs everything; race drops configs that a round-blocked test finds slower',
    ).default('race'),
    repeats: positiveInt(
      `grid: trials per config (default ${SWEEP_REPEATS.grid}); race: the most rounds (default ${SWEEP_REPEATS.race})`,
    ).optional(),
    min_rounds: num({ integer: true, min: 3 }, 'race: full rounds before the first elimination (at least 3)').default(
      3,
    ),
    noise_band: num(
      { min: 0, max: 0.5 },
      'race: stop when every config left is within this fraction of the leader',
    ).default(0.02),
    steps: stepsOverride,
    warmup_trials: warmupTrials,
    budget: budget.prefault({}),
    constraints: sweepConstraints.prefault({}),
    cost: list(str(), {
      description: 'parameters in order of cost, for choosing among ties (default: the order of params)',
    }).optional(),
    applies_when: paramRecord(
      str(),
      'conditional parameters: {prefetch_factor: num_workers} sweeps prefetch_factor only ' +
        'where num_workers is non-zero; elsewhere it is left out and duplicate configs run once',
    ).prefault({}),
  },
  'Sweeps parameters over a grid (lists, ranges, powers of two); ranks configs by a bootstrap CI of throughput.',
);

export const compareStage = object(
  {
    kind: z.literal('compare'),
    name: stageName,
    param: paramName('a parameter name such as "empty_cache" or "arena"'),
    arms: list(paramValue, {
      min: 2,
      description: 'the values compared, each an arm; the other parameters stay fixed',
    }),
    baseline: paramValue.optional(),
    repeats: positiveInt(
      'rounds before the first decision; ' +
        'each round runs every undecided arm and the baseline, in an order that reverses every round',
    ).default(5),
    max_rounds: positiveInt(
      'the most rounds: rounds are added until every arm is decided (faster, slower or within the noise band)',
    ).default(20),
    steps: stepsOverride,
    warmup_trials: warmupTrials,
    commands: record(
      list(str(), { min: 1 }),
      "command workloads: an arm's own program and arguments, keyed by the arm's value, replacing workload.command",
      { noun: 'arm' },
    ).optional(),
    budget: budget.prefault({}),
    noise_band: num(
      { min: 0, max: 0.5 },
      'a ratio CI must lie entirely outside 1 +/- this band to count as a change, ' +
        'and inside it to count as no difference',
    ).default(0.02),
  },
  'Compares values of one parameter in interleaved rounds: each arm against the baseline as per-round pairs, ' +
    'with sequential 95% CIs of the throughput and peak-memory ratios.',
);

const command = (description: string) => list(str(), { min: 1, description }).optional();

export const claimStage = object(
  {
    kind: z.literal('claim'),
    name: stageName,
    claim: str({
      description:
        'the claimed effect as people write it: ' +
        '"2-3x", ">=1.3x", "8x", "5-10% faster", "40-50% less time", "30% less memory"',
    }),
    source: str({ description: 'where the claim comes from, for the report' }).optional(),
    metric: oneOf(
      ['throughput', 'step_time', 'process_time', 'peak_memory'] as const,
      'what is measured: samples/s, time per step, whole-process wall time, or peak memory; ' +
        'default: peak_memory for a claim about memory, else throughput',
    ).optional(),
    baseline: paramRecord(
      paramValue,
      'parameter values of the "before" side (on top of the fixed and chosen ones)',
    ).prefault({}),
    candidate: paramRecord(paramValue, 'parameter values of the "after" side').prefault({}),
    baseline_command: command('command workloads: the "before" program and arguments, replacing workload.command'),
    candidate_command: command('command workloads: the "after" program and arguments'),
    tolerance: num(
      { min: 0, max: 1 },
      'a point claim such as "8x" is widened on the log scale of its effect: ln 8 / (1 + t) to ln 8 * (1 + t)',
    ).default(0.2),
    noise_band: num(
      { min: 0, max: 0.5 },
      'a confirmed claim needs its CI clear of 1 +/- this band on the claimed side',
    ).default(0.01),
    min_pairs: num(
      { integer: true, min: 3 },
      'interleaved baseline/candidate pairs before the first look (at least 3)',
    ).default(5),
    max_pairs: positiveInt('the most pairs: looks at about 1.4x steps add pairs until the verdict is decided').default(
      20,
    ),
    steps: stepsOverride,
    warmup_trials: warmupTrials,
    budget: budget.prefault({}),
    requires: oneOf(
      ['cuda'] as const,
      'cuda: the claim is about GPUs; without one it is reported as skipped, never as passed',
    ).optional(),
  },
  'Checks a claimed effect: interleaved baseline/candidate pairs, added until the sequential CI of the ' +
    'effect decides or the budget ends; verdict confirmed, falls short, exceeds, inconclusive or skipped.',
);

// ---- the kinds
//
// Each stage kind is a spec (above) and a result (its summary schema in domain/stages.ts, shared by
// every layer), listed here once: the kinds, the spec union and the outcome union. Its behaviour
// (runner, checks, report, history) is one module in engine/kinds/.

export const STAGE_KINDS = ['max-batch', 'sweep', 'compare', 'claim'] as const;
export type StageKind = (typeof STAGE_KINDS)[number];

export const stage = z.discriminatedUnion('kind', [maxBatchStage, sweepStage, compareStage, claimStage]);

const outcomeBase = {
  name: z.string(),
  chosen: configSchema,
  evidence: z.record(z.string(), evidenceSchema),
  notes: stageNotesSchema,
};

/** What a stage returns and run.json keeps: the values it chose, why, and its kind's result. */
export const stageOutcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('max-batch'), ...outcomeBase, result: maxBatchSummarySchema }),
  z.object({ kind: z.literal('sweep'), ...outcomeBase, result: sweepSummarySchema }),
  z.object({ kind: z.literal('compare'), ...outcomeBase, result: compareSummarySchema }),
  z.object({ kind: z.literal('claim'), ...outcomeBase, result: claimSummarySchema }),
]);

/** Each stage kind's result, read off the outcome union. */
export type StageResults = { [K in StageKind]: Extract<z.infer<typeof stageOutcomeSchema>, { kind: K }>['result'] };
export type StageOutcomeOf<K extends StageKind> = Omit<z.infer<typeof stageOutcomeSchema>, 'kind' | 'result'> & {
  kind: K;
  result: StageResults[K];
};
/** Written as a mapped union so that code generic in the kind keeps kind and result together. */
export type StageOutcome = { [K in StageKind]: StageOutcomeOf<K> }[StageKind];

// The lists above name the same kinds: a kind in one and not the other does not build.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameKinds: Same<StageKind, z.infer<typeof stage>['kind']> & Same<StageKind, StageOutcome['kind']> = true;
const sameShape: Same<z.infer<typeof stageOutcomeSchema>, StageOutcome> = true;
void sameKinds;
void sameShape;
