// Runs the max-batch stage: each probe is a journaled trial; the search decides, the stage records why.
import type { MaxBatchStageSpec } from '../../experiment/schema.js';
import { findMaxBatch, type MaxBatchResult } from '../../search/max-batch.js';
import type { ProbeFn, ProbeResult } from '../../search/probe.js';
import type { LatencyLimit } from '../../search/throughput.js';
import { ratioThroughput } from '../../stats/throughput.js';
import type { TrialRecord } from '../../trial/record.js';
import { runJournaledTrial, type Evidence, type StageContext, type StageOutcome } from '../context.js';

export type MaxBatchSummary = Omit<MaxBatchResult, 'probes'> & {
  param: string;
  multiple_of: number;
  ceiling: number;
  cap_bytes: number | null;
  headroom: number;
  chosen: number | null;
  choose_rule: string;
};

export async function runMaxBatchStage(ctx: StageContext, spec: MaxBatchStageSpec, name: string): Promise<StageOutcome> {
  const param = spec.param;
  const m = spec.multiple_of;
  const exp = ctx.experiment;
  const byBatch = new Map<ProbeResult, TrialRecord>();
  let n = 0;
  let remaining = 8;
  const run: ProbeFn = async (batch, role, steps) => {
    n += 1;
    const config = { ...ctx.baseConfig, [param]: batch };
    const measure = { warmupSteps: exp.measure.warmup_steps, steps: steps ?? spec.steps };
    const record = await runJournaledTrial(ctx, name, role, config, measure, { n, ofAbout: n + remaining, show: [param] });
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
  const { probes: _probes, ...rest } = result;
  const summary: MaxBatchSummary = {
    ...rest,
    param,
    multiple_of: m,
    ceiling: spec.ceiling,
    cap_bytes: exp.limits.memory ?? null,
    headroom: spec.headroom,
    chosen: value,
    choose_rule: rule,
  };
  return { name, kind: 'max-batch', chosen: value === null ? {} : { [param]: value }, evidence, notes: result.notes, result: summary };
}

/** The batch later stages use: recommended (headroom kept), capped by the latency limit when one is set. */
function choose(r: MaxBatchResult, wanted: MaxBatchStageSpec['choose']): { value: number | null; rule: string } {
  if (wanted === 'max' && r.max !== null) return { value: r.max, rule: 'max: the largest batch that ran (choose: max)' };
  if (wanted === 'fastest' && r.fastest !== null) return { value: r.fastest, rule: 'fastest: the smallest measured batch within the tolerance of the peak samples/s (choose: fastest)' };
  const base = r.recommended ?? r.max;
  const rule = r.recommended !== null ? 'recommended: the largest tested batch that keeps the memory headroom' : 'max: the largest batch that ran (none kept the headroom)';
  const bound = r.latencyBound?.batch;
  if (base !== null && bound !== undefined && bound !== null && bound < base) {
    return { value: bound, rule: `latency: the largest tested batch within ${r.latencyBound!.quantile} <= ${(r.latencyBound!.seconds * 1000).toFixed(1)} ms` };
  }
  return { value: base, rule };
}

function latencyLimit(c: { p95_step_latency?: number; p50_step_latency?: number } | undefined): LatencyLimit | undefined {
  if (c?.p95_step_latency !== undefined) return { quantile: 'p95', seconds: c.p95_step_latency };
  if (c?.p50_step_latency !== undefined) return { quantile: 'p50', seconds: c.p50_step_latency };
  return undefined;
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
  };
}
