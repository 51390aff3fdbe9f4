// Runs the max-batch stage: each probe is a journaled trial; the search decides, the stage records why.
import type { MaxBatchStageSpec } from '../../experiment/schema.js';
import { findMaxBatch, type MaxBatchResult } from '../../search/max-batch.js';
import type { ProbeFn, ProbeResult } from '../../search/probe.js';
import { ratioThroughput } from '../../stats/throughput.js';
import { runJournaledTrial, type StageContext } from '../context.js';
import type {
  Config,
  Evidence,
  LatencyLimit,
  MaxBatchSummary,
  StageOutcomeOf,
  Survival,
  TrialRecord,
} from '../../domain/index.js';

export async function runMaxBatchStage(
  ctx: StageContext,
  spec: MaxBatchStageSpec,
  name: string,
): Promise<StageOutcomeOf<'max-batch'>> {
  const param = spec.param;
  const m = spec.multiple_of;
  const exp = ctx.experiment;
  const byBatch = new Map<ProbeResult, TrialRecord>();
  let n = 0;
  let remaining = 8;
  const run: ProbeFn = async (batch, role, steps) => {
    n += 1;
    const config = { ...ctx.baseConfig, [param]: batch };
    // A run as long as the confirmation also spans its epochs: the loader starts again in the middle.
    const long = spec.confirm_steps > 0 && steps !== undefined && steps >= spec.confirm_steps;
    const measure = {
      warmupSteps: exp.measure.warmup_steps,
      steps: steps ?? spec.steps,
      ...(long && spec.confirm_epochs > 1 ? { epochs: spec.confirm_epochs } : {}),
    };
    const record = await runJournaledTrial(ctx, name, role, config, measure, {
      n,
      ofAbout: n + remaining,
      show: [param],
    });
    const result = toProbe(batch, role, record);
    byBatch.set(result, record);
    return result;
  };
  const latency = latencyLimit(exp.objective.constraints);
  const result = await findMaxBatch(run, {
    multipleOf: m,
    start: spec.start ?? m,
    ceiling: spec.ceiling,
    capBytes: exp.limits.memory ?? null,
    headroom: spec.headroom,
    tolerance: spec.tolerance,
    throughputPoints: spec.throughput_points,
    confirmSteps: spec.confirm_steps,
    placeBy: spec.place_by,
    ...(latency ? { latency } : {}),
    onEstimate: (r) => {
      remaining = r;
    },
  });
  const { value, rule } = choose(result, spec.choose);
  const evidenceRecords = result.probes.filter((p) => p.ok && p.batch === value).map((p) => byBatch.get(p)!);
  const best = evidenceRecords.sort((a, b) => b.steps.length - a.steps.length)[0];
  const evidence: Record<string, Evidence> = {};
  const bestRate = best ? ratioThroughput(best.steps) : null;
  if (value !== null) {
    evidence[param] = {
      stage: name,
      rule,
      // One probe is one trial: its samples/s is shown as a point, never as a CI.
      samples_per_second: null,
      ...(bestRate !== null ? { point: bestRate } : {}),
      trials: evidenceRecords.map((r) => r.index),
    };
  }
  const { probes, ...rest } = result;
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
            probes.filter((p) => p.batch === batch).map((p) => byBatch.get(p)!),
            param,
          );
    if (s) survived[answer] = s;
  }
  const summary: MaxBatchSummary = {
    ...rest,
    survived,
    param,
    multiple_of: m,
    ceiling: spec.ceiling,
    cap_bytes: exp.limits.memory ?? null,
    headroom: spec.headroom,
    chosen: value,
    choose_rule: rule,
  };
  return {
    name,
    kind: 'max-batch',
    chosen: value === null ? {} : { [param]: value },
    evidence,
    notes: result.notes,
    result: summary,
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
    .sort((a, b) => b.steps.length - a.steps.length || (b.epochs ?? 0) - (a.epochs ?? 0));
  const r = ok[0];
  if (!r) return undefined;
  const batch = Number(r.config[param]);
  const boundaries = r.epochs === undefined ? null : r.epochs - 1;
  const config = Object.fromEntries(Object.entries(r.config).filter(([k]) => k !== param));
  return {
    batch,
    trial: r.index,
    steps: r.steps.length,
    epoch_boundaries: boundaries,
    config,
    statement: survivalStatement(r.steps.length, boundaries, config),
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
  };
}
