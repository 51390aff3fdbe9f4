// Runs a claim stage: baseline and candidate in interleaved pairs (A B, B A, ...), adding pairs while
// the CI of the speedup is too wide to decide, then a verdict on the claim in one sentence.
import type { ClaimStageSpec } from '../../experiment/schema.js';
import { bootstrapMedianRatio, type Interval } from '../../stats/bootstrap.js';
import { describeBand, fmt, judgeClaim, parseClaim, type Claim, type ClaimVerdict } from '../../stats/claim.js';
import { mannWhitney } from '../../stats/mann-whitney.js';
import { noiseWarnings } from '../../stats/noise.js';
import { medianRateRatioInterval, trialRates } from '../../stats/throughput.js';
import { runPairs } from '../../search/adaptive.js';
import { availableCpus } from '../../search/constraints.js';
import type { Config, TrialRecord } from '../../trial/record.js';
import type { TrialSpec } from '../../executors/executor.js';
import { planTrials, runJournaledTrial, type StageContext, type StageOutcome } from '../context.js';

export interface ClaimSummary {
  claim: string;
  source: string | null;
  metric: ClaimStageSpec['metric'];
  /** The claimed speedup band (candidate over baseline; > 1 is faster). */
  band: { low: number; high: number | null; one_sided: boolean };
  baseline: Config;
  candidate: Config;
  verdict: ClaimVerdict | 'skipped';
  reason: string;
  /** Measured speedup of the candidate over the baseline, with its 95% CI. */
  speedup: Interval | null;
  /** Mann-Whitney two-sided p-value of the per-trial values. */
  p: number | null;
  pairs: number;
  trials: { baseline: number[]; candidate: number[] };
  warnings: string[];
  sentence: string;
}

export async function runClaimStage(ctx: StageContext, spec: ClaimStageSpec, name: string): Promise<StageOutcome> {
  const claim = parseClaim(spec.claim, spec.tolerance);
  const baseline: Config = { ...ctx.baseConfig, ...scaled(spec.baseline) };
  const candidate: Config = { ...ctx.baseConfig, ...scaled(spec.candidate) };
  const changed = [...new Set([...Object.keys(spec.baseline), ...Object.keys(spec.candidate)])];
  const describe = (c: Config, argv: string[] | undefined) => [argv ? `\`${argv.join(' ')}\`` : '', ...changed.map((k) => `${k}=${String(c[k])}`)].filter(Boolean).join(' ') || '(as fixed)';
  const what = `${describe(baseline, spec.baseline_command)} -> ${describe(candidate, spec.candidate_command)}`;
  const base: TrialRecord[] = [];
  const cand: TrialRecord[] = [];
  const summary = (verdict: ClaimSummary['verdict'], reason: string, speedup: Interval | null, p: number | null, warnings: string[]): ClaimSummary => ({
    claim: spec.claim,
    source: spec.source ?? null,
    metric: spec.metric,
    band: { low: claim.low, high: Number.isFinite(claim.high) ? claim.high : null, one_sided: claim.oneSided },
    baseline: scaled(spec.baseline),
    candidate: scaled(spec.candidate),
    verdict,
    reason,
    speedup,
    p,
    pairs: Math.min(base.length, cand.length),
    trials: { baseline: base.map((r) => r.index), candidate: cand.map((r) => r.index) },
    warnings,
    sentence: sentence(spec, claim, what, verdict, reason, speedup, ctx.environment),
  });
  if (spec.requires === 'cuda' && !ctx.hasCuda) {
    const s = summary('skipped', 'needs CUDA: no NVIDIA GPU was found (nvidia-smi)', null, null, []);
    return { name, kind: 'claim', chosen: {}, evidence: {}, notes: [s.sentence], result: s };
  }
  const exp = ctx.experiment;
  const steps = spec.steps ?? exp.measure.steps;
  let seconds = 0;
  let n = 0;
  const expected = 2 * spec.max_pairs;
  const overBudget = () => (spec.budget.trials !== undefined && n >= spec.budget.trials) || (spec.budget.seconds !== undefined && seconds >= spec.budget.seconds);
  const specOf = (side: 'baseline' | 'candidate', pair: number): TrialSpec => {
    const argv = side === 'baseline' ? spec.baseline_command : spec.candidate_command;
    return { stage: name, role: `${side} pair ${pair + 1}`, config: side === 'baseline' ? baseline : candidate, measure: { warmupSteps: exp.measure.warmup_steps, steps }, ...(argv ? { argv } : {}) };
  };
  const run = async (side: 'baseline' | 'candidate', pair: number): Promise<TrialRecord> => {
    n += 1;
    const s = specOf(side, pair);
    const record = await runJournaledTrial(ctx, name, s.role, s.config, s.measure, { n, ofAbout: expected, show: changed }, s.argv);
    seconds += record.wall_seconds;
    (side === 'baseline' ? base : cand).push(record);
    return record;
  };
  const out = await runPairs(
    async (side, pair) => (await run(side === 'a' ? 'baseline' : 'candidate', pair)).outcome === 'ok',
    () => {
      const j = judge(spec, claim, base, cand, exp.seed);
      return { result: j, decided: j.verdict !== 'inconclusive' };
    },
    { minPairs: spec.min_pairs, maxPairs: spec.max_pairs, overBudget, plan: (trials) => planTrials(ctx, trials.map((t) => specOf(t.side === 'a' ? 'baseline' : 'candidate', t.pair))) },
  );
  if (out.stoppedBy === 'failed') {
    const failed = [...base, ...cand].find((r) => r.outcome !== 'ok')!;
    const s = summary('inconclusive', `a ${failed.role.split(' ')[0]} trial failed (${failed.outcome}: ${failed.reason}), so the claim cannot be measured`, null, null, []);
    return { name, kind: 'claim', chosen: {}, evidence: {}, notes: [s.sentence], result: s };
  }
  const judged = out.last ?? { ...judge(spec, claim, base, cand, exp.seed), verdict: 'inconclusive' as const, reason: `only ${out.pairs} pair(s) ran before the budget ended (min_pairs ${spec.min_pairs})` };
  const budgetOut = out.stoppedBy === 'budget';
  let reason = judged.reason;
  if (judged.verdict === 'inconclusive') {
    reason += budgetOut ? `; the budget ran out after ${n} trials` : `; stopped at max_pairs (${spec.max_pairs})`;
  }
  const values = (rs: TrialRecord[]) => perTrial(spec.metric, rs);
  const warnings = [...noiseWarnings('baseline', values(base), spec.metric === 'throughput'), ...noiseWarnings('candidate', values(cand), spec.metric === 'throughput')].map((w) => w.message);
  const p = base.length > 0 && cand.length > 0 ? mannWhitney(values(base), values(cand)).p : null;
  const s = summary(judged.verdict, reason, judged.speedup, p, warnings);
  return { name, kind: 'claim', chosen: {}, evidence: {}, notes: [s.sentence, ...warnings], result: s };
}

/**
 * "{cpus}" as a value means the CPUs this job may use (SLURM_CPUS_PER_TASK, else the cores), so
 * that "workers low -> high" or "threads 1 -> N" scale to the machine the claim runs on.
 */
function scaled(values: Config): Config {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v === '{cpus}' ? availableCpus().cpus : v]));
}

/** Per-trial values of the metric: samples/s, mean step seconds, or wall seconds. */
function perTrial(metric: ClaimStageSpec['metric'], rs: readonly TrialRecord[]): number[] {
  if (metric === 'throughput') return trialRates(rs.map((r) => r.steps));
  if (metric === 'step_time') return rs.filter((r) => r.steps.length > 0).map((r) => r.steps.reduce((a, s) => a + s.seconds, 0) / r.steps.length);
  return rs.map((r) => r.wall_seconds);
}

/** The candidate's speedup over the baseline with its CI, and the claim's verdict on it. */
function judge(spec: ClaimStageSpec, claim: Claim, base: readonly TrialRecord[], cand: readonly TrialRecord[], seed: number): { verdict: ClaimVerdict; reason: string; speedup: Interval | null } {
  if (base.length === 0 || cand.length === 0) return { verdict: 'inconclusive', reason: 'not measured yet', speedup: null };
  const speedup =
    spec.metric === 'throughput'
      ? medianRateRatioInterval(base.map((r) => r.steps), cand.map((r) => r.steps), { seed })
      : // Time: the speedup is baseline time over candidate time.
        bootstrapMedianRatio(perTrial(spec.metric, cand), perTrial(spec.metric, base), { seed });
  return { ...judgeClaim(claim, speedup), speedup };
}

function sentence(spec: ClaimStageSpec, claim: Claim, what: string, verdict: ClaimSummary['verdict'], reason: string, speedup: Interval | null, environment: string | undefined): string {
  const metric = { throughput: 'throughput', step_time: 'step time', process_time: 'whole-process time' }[spec.metric];
  const measured = speedup ? `measured ${fmt(speedup.estimate)}x [${fmt(speedup.low)}, ${fmt(speedup.high)}]` : 'not measured';
  const where = environment ? ` on ${environment}` : '';
  const band = `claimed ${describeBand(claim.low, claim.high, claim.oneSided)}`;
  return `Claim "${spec.claim}" (${what}, ${metric}, ${band}): ${measured}${where}: ${verdict} (${reason}).`;
}


