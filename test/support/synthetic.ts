// A deterministic in-memory workload with a known memory curve, for unit tests and the benchmark.
import type { MaxBatchOptions } from '../../harness/search/max-batch.js';
import type { ProbeFn, ProbeResult, ProbeRole } from '../../harness/search/probe.js';
import { createRng } from '../../harness/stats/rng.js';

export type CurveShape = 'linear' | 'quadratic' | 'staircase' | 'sublinear';

export interface CurveSpec {
  shape: CurveShape;
  /** Memory that does not depend on batch (runtime, weights). */
  base: number;
  /** Bytes per sample at small batch. */
  perSample: number;
  /** Relative noise of memory readings (standard deviation); outcomes stay exact. */
  noise: number;
  /** Gaussian noise, or two-valued: the reading is `noise` higher on 40% of runs (glibc arenas). */
  noiseKind?: 'gaussian' | 'bimodal';
  cap: number;
  seed: number;
  /** Allocation granularity of the staircase shape, in bytes. */
  chunk?: number;
}

export function trueMemory(c: CurveSpec, batch: number): number {
  switch (c.shape) {
    case 'linear':
      return c.base + c.perSample * batch;
    case 'quadratic':
      return c.base + c.perSample * batch + (c.perSample / 4096) * batch * batch;
    case 'staircase': {
      // An allocator that grows in fixed chunks (64 MiB unless the curve says otherwise).
      const chunk = c.chunk ?? 64 * 2 ** 20;
      return c.base + Math.ceil((c.perSample * batch) / chunk) * chunk;
    }
    case 'sublinear':
      return c.base + c.perSample * batch ** 0.85;
  }
}

/** The exact answer: the largest multiple of m whose memory fits the cap (memory is monotone). */
export function trueMax(c: CurveSpec, m: number, ceiling: number): number | null {
  let lo = 0;
  let hi = Math.floor(ceiling / m) + 1;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (trueMemory(c, mid * m) <= c.cap) lo = mid;
    else hi = mid;
  }
  return lo > 0 ? lo * m : null;
}

/** Sets the cap so that the true max (at granularity 1) is `max`. */
export function capFor(c: Omit<CurveSpec, 'cap'>, max: number): number {
  return (trueMemory({ ...c, cap: 0 }, max) + trueMemory({ ...c, cap: 0 }, max + 1)) / 2;
}

/**
 * Modeled wall time of a synthetic probe: 0.5 s start-up, then warm-up + 2 steps of 0.002 s +
 * batch/50,000 s each when it runs, or one step before an OOM (costs grow with the batch).
 */
export function modeledProbeSeconds(batch: number, ok: boolean): number {
  return 0.5 + (ok ? 3 : 1) * (0.002 + batch / 50_000);
}

/**
 * A workload that runs every batch up to `max` and fails above it, with no memory readings; `seconds`
 * gives each probe's wall time (absent: not measured).
 */
export function thresholdWorkload(
  max: number,
  seconds?: (batch: number, ok: boolean) => number,
): { run: ProbeFn; calls: number[] } {
  const calls: number[] = [];
  const run: ProbeFn = async (batch, role) => {
    calls.push(batch);
    const ok = batch <= max;
    return { ...passFail(batch, ok, role, undefined), ...(seconds ? { seconds: seconds(batch, ok) } : {}) };
  };
  return { run, calls };
}

export interface SyntheticWorkload {
  run: ProbeFn;
  calls: { batch: number; role: string }[];
}

/** Throughput saturates with batch; latency grows linearly. Readings carry seeded noise. */
export function syntheticWorkload(c: CurveSpec): SyntheticWorkload {
  const rng = createRng(c.seed);
  const gauss = (): number => {
    const u = Math.max(rng(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
  };
  const calls: { batch: number; role: string }[] = [];
  const run: ProbeFn = async (batch, role) => {
    calls.push({ batch, role });
    const mem = trueMemory(c, batch);
    const ok = mem <= c.cap;
    const seconds = 0.002 + batch / 50_000;
    const result: ProbeResult = {
      batch,
      ok,
      outcome: ok ? 'ok' : 'oom',
      limitedBytes: ok
        ? mem * (1 + (c.noiseKind === 'bimodal' ? (rng() < 0.4 ? c.noise : 0) : c.noise * gauss()))
        : null,
      rssBytes: ok ? mem : null,
      samplesPerSecond: ok ? batch / seconds : null,
      p50Seconds: ok ? seconds : null,
      p95Seconds: ok ? seconds * 1.1 : null,
      role,
      seconds: modeledProbeSeconds(batch, ok),
      // Memory does not grow with steps here: a run until it flattens sees a plateau at once.
      ...(role === 'confirm' && ok
        ? { growth: { verdict: 'plateau' as const, at_step: 11, peak_bytes: mem, source: 'workload' as const } }
        : {}),
    };
    return result;
  };
  return { run, calls };
}

/** Memory of a transformer-like job: fixed + per token + per batch x length^2 (attention), with noise. */
export interface LengthCurve {
  a: number;
  b: number;
  c: number;
  cap: number;
  /** Relative noise of the readings (standard deviation); outcomes stay exact. */
  noise: number;
  seed: number;
}

export function lengthMemory(c: LengthCurve, batch: number, length: number): number {
  return c.a + c.b * batch * length + c.c * batch * length * length;
}

/** The exact answer per length: the largest multiple of m whose memory fits the cap. */
export function lengthTrueMax(c: LengthCurve, length: number, m: number, ceiling: number): number | null {
  let k = 0;
  while ((k + 1) * m <= ceiling && lengthMemory(c, (k + 1) * m, length) <= c.cap) k += 1;
  return k > 0 ? k * m : null;
}

/** One synthetic workload per length (shared calls), built on syntheticWorkload's conventions. */
export function lengthWorkload(c: LengthCurve): {
  runAt: (length: number) => ProbeFn;
  calls: { batch: number; length: number; role: string }[];
} {
  const rng = createRng(c.seed);
  const calls: { batch: number; length: number; role: string }[] = [];
  const runAt =
    (length: number): ProbeFn =>
    async (batch, role) => {
      calls.push({ batch, length, role });
      const mem = lengthMemory(c, batch, length);
      const ok = mem <= c.cap;
      const seconds = 0.002 + (batch * length) / 5e6;
      return {
        batch,
        ok,
        outcome: ok ? 'ok' : 'oom',
        limitedBytes: ok ? mem * (1 + c.noise * (rng() - 0.5) * 2) : null,
        rssBytes: ok ? mem : null,
        samplesPerSecond: ok ? batch / seconds : null,
        p50Seconds: ok ? seconds : null,
        p95Seconds: ok ? seconds * 1.1 : null,
        role,
        seconds: 0.5 + (ok ? 3 : 1) * seconds,
      };
    };
  return { runAt, calls };
}

/** Bucket lengths and search options shared by the bucket tests and the bucket benchmark. */
export const BUCKET_LENGTHS = [128, 256, 512, 1024, 2048];
export const BUCKET_SEARCH: Omit<MaxBatchOptions, 'capBytes'> = {
  multipleOf: 8,
  start: 8,
  ceiling: 1 << 16,
  headroom: 0.1,
  tolerance: 0.05,
  throughputPoints: 0,
  confirmSteps: 0,
};

/** A run with nothing measured but its outcome. */
export function bareResult(batch: number, outcome: ProbeResult['outcome'], role: ProbeRole): ProbeResult {
  return {
    batch,
    ok: outcome === 'ok',
    outcome,
    limitedBytes: null,
    rssBytes: null,
    samplesPerSecond: null,
    p50Seconds: null,
    p95Seconds: null,
    role,
  };
}

/** A run that passed or ran out of memory; one of confirmation length (`steps` given) that passed ran until its memory flattened. */
export function passFail(batch: number, ok: boolean, role: ProbeRole, steps: number | undefined): ProbeResult {
  return {
    ...bareResult(batch, ok ? 'ok' : 'oom', role),
    ...(ok && steps !== undefined
      ? { growth: { verdict: 'plateau' as const, at_step: steps, peak_bytes: batch, source: 'workload' as const } }
      : {}),
  };
}

/**
 * A workload whose memory at a batch depends on the steps asked for (`memory(batch, steps)`; steps is
 * undefined for a short probe) under `cap`; a run with steps that fits reaches its plateau
 * at its last step. Records every call.
 */
export function growingRun(cap: number, memory: (batch: number, steps: number | undefined) => number) {
  const calls: { batch: number; role: string; steps?: number }[] = [];
  const run: ProbeFn = async (batch, role, steps) => {
    calls.push({ batch, role, ...(steps ? { steps } : {}) });
    const mem = memory(batch, steps);
    const ok = mem <= cap;
    return {
      batch,
      ok,
      outcome: ok ? 'ok' : 'oom',
      limitedBytes: ok ? mem : null,
      rssBytes: ok ? mem : null,
      samplesPerSecond: ok ? 1000 : null,
      p50Seconds: 0.01,
      p95Seconds: 0.01,
      role,
      ...(ok && steps !== undefined
        ? { growth: { verdict: 'plateau' as const, at_step: steps, peak_bytes: mem, source: 'workload' as const } }
        : {}),
    } satisfies ProbeResult;
  };
  return { run, calls };
}
