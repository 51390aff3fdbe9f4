// Runs a claim stage: baseline and candidate in interleaved pairs (A B, B A, ...), with looks at
// planned pair counts (search/claim.ts) until the sequential CI of the claimed effect decides, then
// a verdict on the claim in one sentence that says which way it went.
import type { Frozen } from '../../util/frozen.js';
import { claimMetric } from '../../experiment/checks.js';
import type { ClaimStageSpec } from '../../experiment/schema.js';
import { describeBand, fmt, parseClaim, type Claim } from '../../stats/claim.js';
import { noiseWarnings, type NoiseWarning } from '../../stats/noise.js';
import { ratioThroughput } from '../../stats/throughput.js';
import { runClaimPairs, type ClaimLoopResult } from '../../search/claim.js';
import { availableCpus } from '../../search/constraints.js';
import type { TrialSpec } from '../../executors/executor.js';
import type { StageInput } from '../context.js';
import { failureCause, measuredPeakMemory, runSeconds, stepCount } from '../../domain/index.js';
import type { ClaimMetric, ClaimSummary, Config, LogInterval, StageNote, TrialRecord } from '../../domain/index.js';
import type { StageOutcomeOf } from '../../experiment/schema.js';

type Side = 'baseline' | 'candidate';

/** What a claim stage runs, fixed before its first trial. */
interface ClaimPlan {
  readonly input: StageInput;
  readonly spec: Frozen<ClaimStageSpec>;
  readonly name: string;
  readonly claim: Claim;
  readonly metric: ClaimMetric;
  /** The parameters either side sets: shown on each progress line. */
  readonly changed: string[];
  /** Both sides in words, for the sentence. */
  readonly what: string;
  readonly specOf: (side: Side, pair: number) => TrialSpec;
}

/** What a claim ran: the pairs' verdict, each side's trials in run order, and the first failure. */
interface ClaimTrials {
  readonly out: ClaimLoopResult;
  readonly base: readonly TrialRecord[];
  readonly cand: readonly TrialRecord[];
  /** Timed trials run. */
  readonly n: number;
  readonly failure: string | null;
}

/** A claim's end: its verdict and why, and the trials it rests on. */
interface ClaimFinding {
  readonly verdict: ClaimSummary['verdict'];
  readonly reason: string;
  readonly effect: LogInterval | null;
  readonly noise: NoiseWarning[];
  readonly base: readonly TrialRecord[];
  readonly cand: readonly TrialRecord[];
  readonly looks: number;
}

export async function runClaimStage(
  input: StageInput,
  spec: Frozen<ClaimStageSpec>,
  name: string,
): Promise<StageOutcomeOf<'claim'>> {
  const plan = planClaim({ input, spec, name });
  if (spec.requires === 'cuda' && !input.hasCuda) {
    return claimOutcome(plan, {
      verdict: 'skipped',
      reason: 'needs CUDA: no NVIDIA GPU was found (nvidia-smi)',
      effect: null,
      noise: [],
      base: [],
      cand: [],
      looks: 0,
    });
  }
  const trials = await runClaimTrials(plan);
  return summariseClaim(plan, trials);
}

function planClaim({
  input,
  spec,
  name,
}: {
  input: StageInput;
  spec: Frozen<ClaimStageSpec>;
  name: string;
}): ClaimPlan {
  const claim = parseClaim(spec.claim, spec.tolerance);
  const metric = claimMetric(spec, claim);
  const baseline: Config = { ...input.baseConfig, ...scaled(spec.baseline) };
  const candidate: Config = { ...input.baseConfig, ...scaled(spec.candidate) };
  const changed = [...new Set([...Object.keys(spec.baseline), ...Object.keys(spec.candidate)])];
  const what =
    `${describeSide(baseline, changed, spec.baseline_command)} -> ` +
    `${describeSide(candidate, changed, spec.candidate_command)}`;
  const exp = input.experiment;
  const steps = spec.steps ?? exp.measure.steps;
  const specOf = (side: Side, pair: number): TrialSpec => {
    const argv = side === 'baseline' ? spec.baseline_command : spec.candidate_command;
    return {
      stage: name,
      role: { kind: side, pair: pair + 1 },
      config: side === 'baseline' ? baseline : candidate,
      measure: { warmupSteps: exp.measure.warmup_steps, steps },
      ...(argv ? { argv } : {}),
    };
  };
  return { input, spec, name, claim, metric, changed, what, specOf };
}

/** The warm-ups, then baseline and candidate in interleaved pairs until the claim is decided (search/claim.ts). */
async function runClaimTrials(plan: ClaimPlan): Promise<ClaimTrials> {
  const { input, spec, name, claim, metric, changed, specOf } = plan;
  const base: TrialRecord[] = [];
  const cand: TrialRecord[] = [];
  let seconds = 0;
  let n = 0;
  let failure: string | null = null;
  const expected = 2 * spec.max_pairs;
  const overBudget = () =>
    (spec.budget.trials !== undefined && n >= spec.budget.trials) ||
    (spec.budget.seconds !== undefined && seconds >= spec.budget.seconds);
  await input.trials.warmups(name, spec.warmup_trials, [specOf('baseline', 0), specOf('candidate', 0)], changed);
  const out = await runClaimPairs(
    async (side, pair) => {
      n += 1;
      const record = await input.trials.run(specOf(side, pair), { n, ofAbout: expected, show: changed });
      seconds += record.wall_seconds;
      (side === 'baseline' ? base : cand).push(record);
      if (record.outcome !== 'ok') {
        failure = `a ${side} trial failed (${record.outcome}: ${failureCause(record)}), so the claim cannot be measured`;
        return null;
      }
      const v = trialValue(metric, record);
      if (v === null)
        failure =
          `a ${side} trial reported no ${metric === 'peak_memory' ? 'peak memory' : 'timed steps'}, ` +
          'so the claim cannot be measured';
      return v;
    },
    {
      claim,
      noiseBand: spec.noise_band,
      effectOf: (b, c) => (metric === 'throughput' || metric === 'peak_memory' ? c / b : b / c),
      minPairs: spec.min_pairs,
      maxPairs: spec.max_pairs,
      overBudget,
      plan: (trials) => input.trials.plan(trials.map((t) => specOf(t.side === 'a' ? 'baseline' : 'candidate', t.pair))),
    },
  );
  return { out, base, cand, n, failure };
}

/** The verdict with its reason and noise warnings, from what the claim ran. */
function summariseClaim(plan: ClaimPlan, { out, base, cand, n, failure }: ClaimTrials): StageOutcomeOf<'claim'> {
  const { spec, metric } = plan;
  const looks = out.looks;
  if (out.stoppedBy === 'failed') {
    return claimOutcome(plan, {
      verdict: 'inconclusive',
      reason: failure ?? 'a trial failed',
      effect: null,
      noise: [],
      base,
      cand,
      looks,
    });
  }
  let reason = out.reason;
  if (out.verdict === 'inconclusive' && out.effect) {
    reason +=
      out.stoppedBy === 'budget'
        ? `; the budget ran out after ${n} trials`
        : `; stopped at max_pairs (${spec.max_pairs})`;
  }
  const values = (rs: readonly TrialRecord[]) =>
    rs.map((r) => trialValue(metric, r)).filter((v): v is number => v !== null);
  const noise = [
    ...noiseWarnings('baseline', values(base), metric === 'throughput'),
    ...noiseWarnings('candidate', values(cand), metric === 'throughput'),
  ];
  return claimOutcome(plan, { verdict: out.verdict, reason, effect: out.effect, noise, base, cand, looks });
}

/** The stage's outcome: the claim's summary (its sentence is the answer), its noise warnings as notes; a claim chooses nothing. */
function claimOutcome(plan: ClaimPlan, f: ClaimFinding): StageOutcomeOf<'claim'> {
  const { input, spec, claim, metric } = plan;
  const s: ClaimSummary = {
    claim: spec.claim,
    source: spec.source ?? null,
    metric,
    band: { low: claim.low, high: Number.isFinite(claim.high) ? claim.high : null, one_sided: claim.oneSided },
    baseline: scaled(spec.baseline),
    candidate: scaled(spec.candidate),
    verdict: f.verdict,
    reason: f.reason,
    speedup: f.effect,
    p: f.effect?.p ?? null,
    pairs: Math.min(f.base.length, f.cand.length),
    looks: f.looks,
    trials: { baseline: f.base.map((r) => r.index), candidate: f.cand.map((r) => r.index) },
    warnings: f.noise.map((w) => w.message),
    sentence: sentence({
      spec,
      metric,
      claim,
      what: plan.what,
      verdict: f.verdict,
      reason: f.reason,
      effect: f.effect,
      environment: input.environment,
    }),
  };
  return {
    name: plan.name,
    kind: 'claim',
    chosen: {},
    evidence: {},
    notes: f.noise.map((warning): StageNote => ({ kind: 'noise', warning })),
    result: s,
  };
}

/**
 * One side of a claim for its sentence: its command, if it has its own, and the changed parameters
 * that have a value on this side ("num_workers=2 prefetch_factor=4"); one set on the other side only
 * is left out here, not shown as "undefined".
 */
export function describeSide(config: Config, changed: readonly string[], argv?: readonly string[]): string {
  const values = changed.filter((k) => config[k] !== undefined).map((k) => `${k}=${String(config[k])}`);
  return [...(argv ? [`\`${argv.join(' ')}\``] : []), ...values].join(' ') || '(as fixed)';
}

/**
 * "{cpus}" as a value means the CPUs this job may use (SLURM_CPUS_PER_TASK, else the cores), so
 * that "workers low -> high" or "threads 1 -> N" scale to the machine the claim runs on.
 */
function scaled(values: Config): Config {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v === '{cpus}' ? availableCpus().cpus : v]));
}

/** A trial's value of the metric: samples/s, mean step seconds, wall seconds or peak bytes; null when not measured. */
export function trialValue(metric: ClaimMetric, r: TrialRecord): number | null {
  const positive = (v: number | null | undefined) => (v != null && v > 0 && Number.isFinite(v) ? v : null);
  switch (metric) {
    case 'throughput':
      return positive(ratioThroughput(r.steps));
    case 'step_time':
      return r.steps.length > 0 ? positive(r.steps.reduce((a, s) => a + s.seconds, 0) / stepCount(r.steps)) : null;
    case 'process_time':
      return positive(runSeconds(r));
    case 'peak_memory':
      return positive(measuredPeakMemory(r));
  }
}

/** The claim, what was measured and the verdict, in one sentence. */
function sentence({
  spec,
  metric,
  claim,
  what,
  verdict,
  reason,
  effect,
  environment,
}: {
  spec: Frozen<ClaimStageSpec>;
  metric: ClaimMetric;
  claim: Claim;
  what: string;
  verdict: ClaimSummary['verdict'];
  reason: string;
  effect: LogInterval | null;
  environment: string | undefined;
}): string {
  const label = {
    throughput: 'throughput',
    step_time: 'step time',
    process_time: 'whole-process time',
    peak_memory: 'peak memory',
  }[metric];
  const measured = effect
    ? `measured ${fmt(effect.estimate)}x [${fmt(effect.low)}, ${fmt(effect.high)}]`
    : 'not measured';
  const where = environment ? ` on ${environment}` : '';
  const band = `claimed ${describeBand(claim.low, claim.high, claim.oneSided)}`;
  return `Claim "${spec.claim}" (${what}, ${label}, ${band}): ${measured}${where}: ${verdict} (${reason}).`;
}
