// A search's view of a run that either passed or ran out of memory, with nothing else measured: what the
// band tests and bench:band feed the max-batch search.
import type { ProbeResult, ProbeRole } from '../../harness/search/probe.js';

/** A passed run of confirmation length (`steps` given) ran until its memory flattened. */
export function passFail(batch: number, ok: boolean, role: ProbeRole, steps: number | undefined): ProbeResult {
  return {
    batch,
    ok,
    outcome: ok ? 'ok' : 'oom',
    limitedBytes: null,
    rssBytes: null,
    samplesPerSecond: ok ? batch : null,
    p50Seconds: null,
    p95Seconds: null,
    role,
    ...(ok && steps !== undefined
      ? { growth: { verdict: 'plateau' as const, at_step: steps, peak_bytes: batch, source: 'workload' as const } }
      : {}),
  };
}
