// Runs the max-batch stage: each probe is a journaled trial; the search decides, the stage records why.
import type { Frozen } from '../../util/frozen.js';
import type { MaxBatchStageSpec } from '../../experiment/schema.js';
import { findMaxBatchPerBucket } from '../../search/buckets.js';
import { findMaxBatch, type MaxBatchOptions, type MaxBatchResult } from '../../search/max-batch.js';
import { confirmationMeasure, growthPhrase, holds, PLATEAU_WINDOW } from '../../search/confirmation.js';
import { predictCards, recipeBatches, scaleLr } from '../../search/recipe.js';
import { workloadRanks } from '../../experiment/checks.js';
import { formatBytes } from '../../experiment/units.js';
import type { ProbeFn, ProbeResult } from '../../search/probe.js';
import { runSeconds, TIMEOUT_MARGIN } from '../../search/eta.js';
import { ratioThroughput } from '../../stats/throughput.js';
import type { StageInput } from '../context.js';
import { bracketMode, runBracket } from './max-batch-bracket.js';
import { confirmPrediction, predictionHere, type PredictionHere } from './confirm-prediction.js';
import type {
  BucketsSummary,
  CardPredictions,
  Config,
  Evidence,
  FirstHold,
  Recipe,
  LatencyLimit,
  MaxBatchSummary,
  Survival,
  TrialRecord,
} from '../../domain/index.js';
import { stepCount } from '../../domain/index.js';
import type { StageOutcomeOf } from '../../experiment/schema.js';

/** The probe function of a max-batch stage, and the trial record behind each probe it returned. */
interface Prober {
  /** Probes at one bucket value (or at the experiment's own shape without buckets). */
  readonly runAt: (value?: number) => ProbeFn;
  readonly byBatch: Map<ProbeResult, TrialRecord>;
  /** The search's estimate of the probes it still needs (and their seconds), for the progress line. */
  readonly onEstimate: (remaining: number, seconds?: number) => void;
}

/** What the search found: at the longest bucket when the stage has buckets, with the bucket map. */
interface MaxBatchSearch {
  readonly result: MaxBatchResult;
  readonly buckets?: BucketsSummary;
  /** The bucket value the stage's answer is for (the longest bucket); undefined without buckets. */
  readonly longest?: number;
}

export async function runMaxBatchStage(
  input: StageInput,
  spec: Frozen<MaxBatchStageSpec>,
  name: string,
): Promise<StageOutcomeOf<'max-batch'>> {
  const prober = makeProber({ input, spec, name });
  const target = spec.predicted_by === undefined ? undefined : predictionHere(input, spec, spec.predicted_by);
  let options = searchOptions({ input, spec, guide: target?.predicted, onEstimate: prober.onEstimate });
  const bracket = target === undefined ? bracketMode(input, spec) : { mode: 'fresh', why: 'predicted_by' };
  const head: string[] = [`search: ${bracket.mode} (${bracket.why}); ${capPhrase(input)}`];
  if (bracket.mode === 'in-process') {
    const b = await runBracket({ input, spec, name, options, onCard: onDevice(input) });
    options = { ...options, hint: b.hint };
    head.push(...b.log);
  }
  const search = await searchMaxBatch({ spec, options, prober });
  search.result.log.unshift(...head);
  return summariseMaxBatch({ input, spec, name, prober, search, target });
}

function makeProber({
  input,
  spec,
  name,
}: {
  input: StageInput;
  spec: Frozen<MaxBatchStageSpec>;
  name: string;
}): Prober {
  const param = spec.param;
  const exp = input.experiment;
  const byBatch = new Map<ProbeResult, TrialRecord>();
  let n = 0;
  let remaining = 8;
  let etaEnd: number | undefined;
  const bucket = spec.buckets;
  const runAt =
    (value?: number): ProbeFn =>
    async (batch, role, steps) => {
      n += 1;
      const config = {
        ...input.baseConfig,
        ...(bucket && value !== undefined ? { [bucket.param]: value } : {}),
        // Probes run without accumulation (it does not change the memory of a step); the recipe sets it after.
        ...(spec.keep_effective_batch !== undefined && input.baseConfig[spec.accumulation_param] === undefined
          ? { [spec.accumulation_param]: 1 }
          : {}),
        [param]: batch,
      };
      // A run as long as the confirmation runs until memory flattens, across epoch boundaries (the loader
      // starts again); every other trial runs the stage's probe steps.
      const long = spec.confirm_steps > 0 && steps !== undefined && steps >= spec.confirm_steps;
      const measure = long
        ? confirmationMeasure({
            warmupSteps: exp.measure.warmup_steps,
            minSteps: steps,
            maxSteps: spec.confirm_max_steps,
            epochs: spec.confirm_epochs,
          })
        : { warmupSteps: exp.measure.warmup_steps, steps: steps ?? spec.steps };
      // A run until memory flattens may take confirm_max_steps steps: its timeout follows the step time
      // measured, so that a slow machine never ends one early (a timeout is not evidence about memory).
      const expected = long
        ? runSeconds(
            [...byBatch.keys()],
            batch,
            measure.warmupSteps + measure.steps,
            exp.measure.warmup_steps + spec.steps,
          )
        : undefined;
      const timeoutSeconds =
        expected !== undefined && TIMEOUT_MARGIN * expected > exp.limits.timeout
          ? Math.ceil(TIMEOUT_MARGIN * expected)
          : undefined;
      const record = await input.trials.run(
        {
          stage: name,
          role: { kind: role },
          config,
          measure,
          ...(onDevice(input) ? { deviceBound: true } : {}),
          ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
        },
        {
          n,
          // The search counts the trial it is about to run among those it still needs.
          ofAbout: n - 1 + Math.max(1, remaining),
          show: bucket ? [bucket.param, param] : [param],
          // A countdown to the search's last estimate of its end, until it estimates again.
          ...(etaEnd !== undefined && !bucket ? { etaSeconds: Math.max(0, (etaEnd - Date.now()) / 1000) } : {}),
        },
      );
      const result = onDevice(input)
        ? { ...toProbe(batch, role, record), limitedBytes: record.peak_device_bytes ?? null }
        : toProbe(batch, role, record);
      byBatch.set(result, record);
      return result;
    };
  const onEstimate = (r: number, seconds?: number) => {
    remaining = bucket ? r + (bucket.values.length - 1) * 3 : r;
    etaEnd = seconds === undefined ? undefined : Date.now() + seconds * 1000;
  };
  return { runAt, byBatch, onEstimate };
}

/**
 * Whether the search works against the card's memory: no host cap is set and the machine has a GPU, so
 * the readings are the device memory the workload reports (peak_device_bytes), not capped host bytes.
 */
function onDevice(input: StageInput): boolean {
  return input.experiment.limits.memory === undefined && (input.device.gpu_memory_bytes ?? null) !== null;
}

function capPhrase(input: StageInput): string {
  const host = input.experiment.limits.memory;
  if (host !== undefined) return `probes placed against limits.memory (${formatBytes(host)})`;
  const gpu = input.device.gpu_memory_bytes ?? null;
  return gpu !== null
    ? `probes placed against the card's memory (${formatBytes(gpu)}) by the device memory each run reports`
    : 'no memory cap to place probes against: doubling, then bisection';
}

/** The search's settings from the stage's, with the prediction that guides it when predicted_by is set. */
function searchOptions({
  input,
  spec,
  guide,
  onEstimate,
}: {
  input: StageInput;
  spec: Frozen<MaxBatchStageSpec>;
  /** The earlier stage's predicted max on this device (predicted_by). */
  guide: number | null | undefined;
  onEstimate: (remaining: number) => void;
}): MaxBatchOptions {
  const exp = input.experiment;
  const latency = latencyLimit(exp.objective.constraints);
  return {
    multipleOf: spec.multiple_of,
    start: spec.start ?? spec.multiple_of,
    ceiling: spec.ceiling,
    capBytes: exp.limits.memory ?? input.device.gpu_memory_bytes ?? null,
    headroom: spec.headroom,
    tolerance: spec.tolerance,
    throughputPoints: spec.throughput_points,
    // With choose: max nothing uses the recommended batch: its trials are not run.
    ...(spec.choose === 'max' ? { skipRecommended: true } : {}),
    confirmSteps: spec.confirm_steps,
    placeBy: spec.place_by,
    strategy: spec.strategy,
    runLengths: {
      short: exp.measure.warmup_steps + spec.steps,
      long: exp.measure.warmup_steps + spec.confirm_steps + PLATEAU_WINDOW,
    },
    // Not per bucket: the bucket map rests on one model across buckets (docs/max-batch.md).
    ...(spec.buckets ? {} : { repeatBoundary: spec.repeat_boundary, maxRisk: spec.max_risk }),
    ...(latency ? { latency } : {}),
    // The earlier stage's line, taken at its word: a correct prediction closes with one pair of probes.
    ...(guide != null ? { predict: () => ({ batch: guide, spread: 0 }) } : {}),
    onEstimate,
  };
}

/** One search, or one per bucket (longest first) with the bucket map. */
async function searchMaxBatch({
  spec,
  options,
  prober,
}: {
  spec: Frozen<MaxBatchStageSpec>;
  options: MaxBatchOptions;
  prober: Prober;
}): Promise<MaxBatchSearch> {
  const bucket = spec.buckets;
  if (!bucket) return { result: await findMaxBatch(prober.runAt(), options) };
  // A throughput curve per bucket would multiply the trials; the bucket map needs the max (or recommended).
  const search = await findMaxBatchPerBucket(prober.runAt, bucket.values, {
    ...options,
    throughputPoints: 0,
    skipRecommended: spec.choose === 'max',
  });
  const buckets: BucketsSummary = {
    param: bucket.param,
    rows: search.buckets.map(({ value, result: r }) => {
      const chosen = choose(r, spec.choose).value;
      const records = r.probes.filter((p) => p.batch === chosen).map((p) => prober.byBatch.get(p)!);
      const s = chosen === null ? undefined : survival(records, spec.param);
      return {
        value,
        status: r.status,
        max: r.max,
        smallestFail: r.smallestFail,
        recommended: r.recommended,
        chosen,
        tokens: chosen === null ? null : chosen * value,
        probesToMax: r.probesToMax,
        confirmed: r.confirmed,
        ...(s ? { survived: s } : {}),
        notes: r.notes,
      };
    }),
    probes_total: search.probesToMax,
    model: search.model ? { a: search.model.a, b: search.model.b, c: search.model.c, sigma: search.model.sigma } : null,
  };
  return { result: search.buckets[0]!.result, buckets, longest: search.buckets[0]!.value };
}

/** The chosen batch with its evidence, the recipe (which may run trials), the card predictions and the summary. */
async function summariseMaxBatch({
  input,
  spec,
  name,
  prober,
  search,
  target,
}: {
  input: StageInput;
  spec: Frozen<MaxBatchStageSpec>;
  name: string;
  prober: Prober;
  search: MaxBatchSearch;
  target: PredictionHere | undefined;
}): Promise<StageOutcomeOf<'max-batch'>> {
  const { param, buckets: bucket } = spec;
  const { result, buckets, longest } = search;
  const { byBatch } = prober;
  const exp = input.experiment;
  const picked = choose(result, spec.choose);
  let { value } = picked;
  const { rule } = picked;
  const evidence = chosenEvidence({ spec, name, search, byBatch, picked });
  const { probes, ...rest } = result;
  const survived = survivedAnswers(result, byBatch, param);
  const firstHold = firstHoldOf(result, byBatch);
  const chosen: Config = value === null ? {} : { [param]: value, ...(bucket ? { [bucket.param]: longest! } : {}) };
  const recipe = await keepRecipe({
    spec,
    from: value,
    ranks: workloadRanks(exp),
    probes,
    byBatch,
    run: prober.runAt(longest),
  });
  if (recipe?.batch != null && recipe.accumulation_steps != null) {
    value = recipe.batch;
    chosen[param] = recipe.batch;
    chosen[spec.accumulation_param] = recipe.accumulation_steps;
    evidence[param] = { ...evidence[param]!, rule: recipe.statement, trials: recipe.trials };
    evidence[spec.accumulation_param] = {
      stage: name,
      rule: recipe.statement,
      samples_per_second: null,
      trials: recipe.trials,
    };
  }
  const predictions = cardPredictions({ probes, byBatch, m: spec.multiple_of, asked: spec.predict_cards });
  const atMax = probes.find((p) => p.ok && p.batch === result.max);
  const capMechanism = atMax ? byBatch.get(atMax)?.limit.mechanism : undefined;
  const summary: MaxBatchSummary = {
    ...rest,
    survived,
    param,
    multiple_of: spec.multiple_of,
    ceiling: spec.ceiling,
    cap_bytes: exp.limits.memory ?? null,
    ...(capMechanism ? { cap_mechanism: capMechanism } : {}),
    ...(onDevice(input) ? { card_bytes: input.device.gpu_memory_bytes! } : {}),
    ...(firstHold ? { first_hold: firstHold } : {}),
    headroom: spec.headroom,
    ...(spec.strategy !== 'tunebench' ? { strategy: spec.strategy } : {}),
    chosen: value,
    choose_rule: rule,
    ...(buckets ? { buckets } : {}),
    ...(recipe ? { recipe } : {}),
    // A confirming stage measures its card; the cards table is the predicting stage's.
    ...(predictions && !target ? { predictions } : {}),
  };
  if (target) return confirmPrediction(target, name, summary, result);
  return {
    name,
    kind: 'max-batch',
    chosen,
    evidence,
    notes: result.notes,
    result: summary,
  };
}

/** Evidence for the chosen batch (and, with buckets, for the longest bucket): none when no batch ran. */
function chosenEvidence({
  spec,
  name,
  search,
  byBatch,
  picked,
}: {
  spec: Frozen<MaxBatchStageSpec>;
  name: string;
  search: MaxBatchSearch;
  byBatch: Map<ProbeResult, TrialRecord>;
  picked: { value: number | null; rule: string };
}): Record<string, Evidence> {
  const { param, buckets: bucket } = spec;
  const { result, longest } = search;
  const { value, rule } = picked;
  const evidence: Record<string, Evidence> = {};
  if (value === null) return evidence;
  const evidenceRecords = result.probes.filter((p) => p.ok && p.batch === value).map((p) => byBatch.get(p)!);
  const best = evidenceRecords.sort((a, b) => stepCount(b.steps) - stepCount(a.steps))[0];
  const bestRate = best ? ratioThroughput(best.steps) : null;
  // The user's short settings may make the search cheaper, never an unproven max look proven.
  const g = result.memoryGrowth;
  const proof = value === result.max && g && !holds(g) ? `; not proven to hold: ${growthPhrase(g)}` : '';
  evidence[param] = {
    stage: name,
    rule: (bucket ? `${rule}, at the longest bucket ${bucket.param}=${longest} (it fits every bucket)` : rule) + proof,
    // One probe is one trial: its samples/s is shown as a point, never as a CI.
    samples_per_second: null,
    ...(bestRate !== null ? { point: bestRate } : {}),
    trials: evidenceRecords.map((r) => r.index),
  };
  if (bucket)
    evidence[bucket.param] = {
      ...evidence[param],
      rule: `the longest bucket: later stages run at ${bucket.param}=${longest}, where ${param}=${value} fits (every shorter bucket fits it too)`,
    };
  return evidence;
}

/**
 * The first batch known to hold, in trial order: a run until memory flattened that reached its plateau, at a
 * batch no larger than the max written, where no run of it or of a smaller batch failed. Undefined when none.
 */
export function firstHoldOf(result: MaxBatchResult, byBatch: Map<ProbeResult, TrialRecord>): FirstHold | undefined {
  const max = result.max;
  if (max === null) return undefined;
  const runs = result.probes.map((p) => ({ p, r: byBatch.get(p)! })).sort((a, b) => a.r.index - b.r.index);
  const lowestFail = Math.min(...runs.filter(({ p }) => !p.ok).map(({ p }) => p.batch));
  const first = runs.find(({ p }) => p.ok && holds(p.growth) && p.batch <= max && p.batch < lowestFail);
  if (!first) return undefined;
  const start = Math.min(...runs.map(({ r }) => Date.parse(r.started_at)));
  const end = Date.parse(first.r.started_at) + first.r.wall_seconds * 1000;
  return {
    batch: first.p.batch,
    trial: first.r.index,
    after_seconds: Math.round(end - start) / 1000,
    trials: runs.filter(({ r }) => r.index <= first.r.index).length,
    memory_growth: first.p.growth!,
  };
}

/** How long each answer (max, recommended, fastest) ran, from its longest ok probe. */
function survivedAnswers(
  result: MaxBatchResult,
  byBatch: Map<ProbeResult, TrialRecord>,
  param: string,
): MaxBatchSummary['survived'] {
  const survived: MaxBatchSummary['survived'] = {};
  for (const [answer, batch] of [
    ['max', result.max],
    ['recommended', result.recommended],
    ['fastest', result.fastest],
  ] as const) {
    const s =
      batch === null
        ? undefined
        : survival(
            result.probes.filter((p) => p.batch === batch).map((p) => byBatch.get(p)!),
            param,
          );
    if (s) survived[answer] = s;
  }
  return survived;
}

/**
 * keep_effective_batch: the largest per-rank batch at most the stage's choice that divides the
 * effective batch, with the accumulation steps that make it up; the batch runs (as long as the
 * confirmation) before it is written. base_lr and base_batch add the learning rate by both rules.
 */
async function keepRecipe({
  spec,
  from,
  ranks,
  probes,
  byBatch,
  run,
}: {
  spec: Frozen<MaxBatchStageSpec>;
  /** The stage's choice, before the recipe. */
  from: number | null;
  ranks: number;
  probes: readonly ProbeResult[];
  byBatch: Map<ProbeResult, TrialRecord>;
  /** Probes at the shape of the stage's answer. */
  run: ProbeFn;
}): Promise<Recipe | undefined> {
  const effective = spec.keep_effective_batch;
  const lr =
    spec.base_lr !== undefined && spec.base_batch !== undefined && (effective !== undefined || from !== null)
      ? lrRules(spec.base_lr, spec.base_batch, effective ?? from! * ranks)
      : undefined;
  if (effective === undefined) {
    if (!lr) return undefined;
    return {
      effective_batch: from! * ranks,
      batch: from,
      accumulation_steps: null,
      ranks,
      accumulation_param: spec.accumulation_param,
      from,
      trials: [],
      statement: `no keep_effective_batch: the effective batch is the chosen batch ${from} x ${ranks} rank${ranks === 1 ? '' : 's'}`,
      lr,
    };
  }
  const base = {
    effective_batch: effective,
    ranks,
    accumulation_param: spec.accumulation_param,
    from,
    ...(lr ? { lr } : {}),
  };
  if (from === null)
    return { ...base, batch: null, accumulation_steps: null, trials: [], statement: 'no batch fits, so no recipe' };
  const steps = spec.confirm_steps > 0 ? spec.confirm_steps : spec.steps;
  const trials: number[] = [];
  for (const b of recipeBatches(effective, ranks, from)) {
    const known = probes.find((p) => p.ok && p.batch === b && (p.role === 'confirm' || steps === spec.steps));
    const r = known ?? (await run(b, 'recipe', steps));
    trials.push(byBatch.get(r)!.index);
    if (!r.ok) continue;
    const accumulation = effective / ranks / b;
    return {
      ...base,
      batch: b,
      accumulation_steps: accumulation,
      trials,
      statement:
        `keep_effective_batch ${effective}: batch ${b} x ${accumulation} accumulation step${accumulation === 1 ? '' : 's'}` +
        `${ranks > 1 ? ` x ${ranks} ranks` : ''}, the largest batch that divides it and fits (at most ${from}); it ran ${steps} steps`,
    };
  }
  return {
    ...base,
    batch: null,
    accumulation_steps: null,
    trials,
    statement: `no batch up to ${from} divides ${effective / ranks} and ran`,
  };
}

function lrRules(baseLr: number, baseBatch: number, effective: number): NonNullable<Recipe['lr']> {
  const { linear, sqrt } = scaleLr(baseLr, baseBatch, effective);
  return {
    base_lr: baseLr,
    base_batch: baseBatch,
    effective_batch: effective,
    linear,
    sqrt,
    statement:
      `rules, not measurements: from base_lr ${baseLr} at ${baseBatch} to an effective batch of ${effective}, ` +
      `the linear rule gives ${fmtLr(linear)} and the square-root rule ${fmtLr(sqrt)}; validate on your own loss curve`,
  };
}

const fmtLr = (x: number) => Number(x.toPrecision(3)).toString();

/**
 * The max batch predicted on 16 to 141 GB cards from the probes' memory (the workload's device memory
 * when it reports one, else peak RSS): fixed plus per-sample bytes, beside seed 003's rule of thumb.
 */
function cardPredictions({
  probes,
  byBatch,
  m,
  asked,
}: {
  probes: readonly ProbeResult[];
  byBatch: Map<ProbeResult, TrialRecord>;
  /** multiple_of: predictions are rounded down to it. */
  m: number;
  /** predict_cards: show the table even for a line of host memory. */
  asked: boolean | undefined;
}): CardPredictions | undefined {
  const ok = probes.filter((p) => p.ok && p.rssBytes !== null);
  const device = ok.length > 0 && ok.every((p) => byBatch.get(p)?.peak_device_bytes != null);
  const readings = ok.map((p) => ({ batch: p.batch, bytes: p.rssBytes! }));
  if (new Set(readings.map((r) => r.batch)).size < 3) return undefined;
  const fit = predictCards(readings, m);
  if (!fit) return undefined;
  const quantity = device
    ? 'device memory the workload reported (peak allocated)'
    : 'peak RSS of the trial (host memory)';
  return {
    quantity,
    of_device: device,
    // Kept for predicted_by either way; shown where the line means something for a card, or when asked.
    shown: asked ?? device,
    fixed_bytes: fit.fixed,
    per_sample_bytes: fit.perSample,
    rows: fit.rows.map((r) => ({ card: r.card, bytes: r.bytes, predicted: r.predicted, rule_of_thumb: r.ruleOfThumb })),
    statement:
      `predictions, not measurements: ${formatBytes(fit.fixed)} fixed + ${formatBytes(fit.perSample)} per sample ` +
      `(a line through ${readings.length} probes' ${quantity}), rounded down to multiple_of ${m}; ` +
      "the rule of thumb is seed 003's batch ~ (VRAM_GB - 4) x 1.5. A CUDA context and allocator fragmentation " +
      'are not in the line: confirm on the card (a SLURM run per GPU type shows predicted against measured)',
  };
}

/** The batch later stages use: recommended (headroom kept), capped by the latency limit when one is set. */
function choose(r: MaxBatchResult, wanted: MaxBatchStageSpec['choose']): { value: number | null; rule: string } {
  if (wanted === 'max' && r.max !== null)
    return { value: r.max, rule: 'max: the largest batch that ran (choose: max)' };
  if (wanted === 'fastest' && r.fastest !== null)
    return {
      value: r.fastest,
      rule: 'fastest: the smallest measured batch within the tolerance of the peak samples/s (choose: fastest)',
    };
  const base = r.recommended ?? r.max;
  const rule =
    r.recommended !== null
      ? 'recommended: the largest tested batch that keeps the memory headroom'
      : 'max: the largest batch that ran (none kept the headroom)';
  const bound = r.latencyBound?.batch;
  if (base !== null && bound !== undefined && bound !== null && bound < base) {
    return {
      value: bound,
      rule:
        'latency: the largest tested batch within ' +
        `${r.latencyBound!.quantile} <= ${(r.latencyBound!.seconds * 1000).toFixed(1)} ms`,
    };
  }
  return { value: base, rule };
}

function latencyLimit(
  c: { p95_step_latency?: number; p50_step_latency?: number } | undefined,
): LatencyLimit | undefined {
  if (c?.p95_step_latency !== undefined) return { quantile: 'p95', seconds: c.p95_step_latency };
  if (c?.p50_step_latency !== undefined) return { quantile: 'p50', seconds: c.p50_step_latency };
  return undefined;
}

/** The longest ok run among `records` (most timed steps, then most epochs), stated in words. */
export function survival(records: readonly TrialRecord[], param: string): Survival | undefined {
  const ok = records
    .filter((r) => r.outcome === 'ok')
    .sort((a, b) => stepCount(b.steps) - stepCount(a.steps) || (b.epochs ?? 0) - (a.epochs ?? 0));
  const r = ok[0];
  if (!r) return undefined;
  const batch = Number(r.config[param]);
  const boundaries = r.epochs === undefined ? null : r.epochs - 1;
  const config = Object.fromEntries(Object.entries(r.config).filter(([k]) => k !== param));
  return {
    batch,
    trial: r.index,
    steps: stepCount(r.steps),
    epoch_boundaries: boundaries,
    config,
    statement: survivalStatement(stepCount(r.steps), boundaries, config),
    ...(r.memory_growth ? { memory_growth: r.memory_growth } : {}),
  };
}

/** "survived 50 steps across 1 epoch boundary with num_workers=2, pin_memory=false". */
export function survivalStatement(steps: number, boundaries: number | null, config: Config): string {
  const across =
    boundaries === null
      ? ' (the workload reports no epochs)'
      : boundaries === 0
        ? ' within one epoch'
        : ` across ${boundaries} epoch boundar${boundaries === 1 ? 'y' : 'ies'}`;
  const settings = Object.entries(config)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
  return `survived ${steps} step${steps === 1 ? '' : 's'}${across}${settings ? ` with ${settings}` : ''}`;
}

export function toProbe(batch: number, role: ProbeResult['role'], r: TrialRecord): ProbeResult {
  return {
    batch,
    ok: r.outcome === 'ok',
    outcome: r.outcome,
    reason: r.reason,
    limitedBytes: r.peak_limited_bytes,
    // On a GPU the headroom protects device memory (what the workload reported), not host RSS.
    rssBytes: r.peak_device_bytes ?? r.peak_rss_bytes,
    samplesPerSecond: r.samples_per_second,
    p50Seconds: r.step_seconds?.median ?? null,
    p95Seconds: r.step_seconds?.p95 ?? null,
    role,
    seconds: r.wall_seconds,
    ...(r.memory_growth ? { growth: r.memory_growth } : {}),
    ...(r.error ? { error: r.error } : {}),
  };
}
