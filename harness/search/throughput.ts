// After the max is known: the fastest batch (max is not best) and the largest batch within a latency limit.
import type { ProbeFn, ProbeResult } from './probe.js';
import type { LatencyBound, LatencyLimit, StageNote } from '../domain/index.js';

/** Probes spent narrowing the latency bound. */
const LATENCY_REFINE_PROBES = 4;

export interface ThroughputSummary {
  fastest: number | null;
  peakSamplesPerSecond: number | null;
  latencyBound?: LatencyBound;
  notes: StageNote[];
}

export async function summarizeThroughput(
  probes: ProbeResult[],
  run: ProbeFn,
  opts: { tolerance: number; latency?: LatencyLimit; max: number; m: number },
): Promise<ThroughputSummary> {
  const notes: StageNote[] = [];
  let latencyBound: LatencyBound | undefined;
  if (opts.latency) latencyBound = await boundLatency(probes, run, opts.latency, opts, notes);
  // A short probe above the max (it passed, its confirmation-length run did not) is no answer.
  const measured = probes.filter(
    (p) => p.ok && p.batch <= opts.max && p.samplesPerSecond !== null && Number.isFinite(p.samplesPerSecond),
  );
  if (measured.length === 0)
    return { fastest: null, peakSamplesPerSecond: null, notes, ...(latencyBound ? { latencyBound } : {}) };
  const best = new Map<number, number>();
  for (const p of measured) best.set(p.batch, Math.max(best.get(p.batch) ?? 0, p.samplesPerSecond!));
  const peak = Math.max(...best.values());
  const fastest = Math.min(
    ...[...best.entries()].filter(([, sps]) => sps >= (1 - opts.tolerance) * peak).map(([b]) => b),
  );
  if (fastest < opts.max) notes.push({ kind: 'fastest-below-max', fastest, tolerance: opts.tolerance, max: opts.max });
  return { fastest, peakSamplesPerSecond: peak, notes, ...(latencyBound ? { latencyBound } : {}) };
}

function latencyOf(p: ProbeResult, q: LatencyLimit['quantile']): number | null {
  return q === 'p50' ? p.p50Seconds : p.p95Seconds;
}

async function boundLatency(
  probes: ProbeResult[],
  run: ProbeFn,
  limit: LatencyLimit,
  { m, max }: { m: number; max: number },
  notes: StageNote[],
): Promise<LatencyBound> {
  const bracket = (): { meet?: ProbeResult; violate?: ProbeResult } => {
    const ok = probes.filter((p) => p.ok && p.batch <= max && latencyOf(p, limit.quantile) !== null);
    const meeting = ok.filter((p) => latencyOf(p, limit.quantile)! <= limit.seconds);
    const meet = meeting.sort((a, b) => b.batch - a.batch)[0];
    const violate = ok
      .filter((p) => latencyOf(p, limit.quantile)! > limit.seconds && (!meet || p.batch > meet.batch))
      .sort((a, b) => a.batch - b.batch)[0];
    return { ...(meet ? { meet } : {}), ...(violate ? { violate } : {}) };
  };
  for (let i = 0; i < LATENCY_REFINE_PROBES; i++) {
    const { meet, violate } = bracket();
    if (!meet || !violate || violate.batch - meet.batch <= m) break;
    const la = latencyOf(meet, limit.quantile)!;
    const lb = latencyOf(violate, limit.quantile)!;
    // Latency grows about linearly with batch; interpolate, then keep strictly inside the bracket.
    const guess = meet.batch + ((limit.seconds - la) / Math.max(lb - la, 1e-12)) * (violate.batch - meet.batch);
    const b = Math.min(Math.max(Math.floor(guess / m) * m, meet.batch + m), violate.batch - m);
    const r = await run(b, 'latency');
    probes.push(r);
  }
  const { meet, violate } = bracket();
  if (!meet) notes.push({ kind: 'latency-not-met', quantile: limit.quantile, seconds: limit.seconds });
  return { ...limit, batch: meet?.batch ?? null, firstViolating: violate?.batch ?? null };
}
