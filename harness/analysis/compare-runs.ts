// Before/after comparison of two runs: for each metric both runs measured (a stage's config or arm
// with successful trials in both), the ratio after/before of the geometric-mean throughput and peak
// memory with Welch 95% CIs on the log scale (two runs are independent samples of trials; a side
// with fewer than 3 trials gets no CI and no verdict), the chosen configs side by side, and
// warnings when the environments differ.
import { MIN_TRIALS_FOR_CI, welchRatioInterval } from '../stats/log-ratio.js';
import { ratioThroughput } from '../stats/throughput.js';
import { direction, memoryVerdict, speedVerdict } from '../stats/verdict.js';
import {
  isFinished,
  type Fingerprint,
  type WorkloadStack,
  type Interval,
  type MemoryVerdict,
  type ParamValue,
  type SpeedVerdict,
  type TrialRecord,
} from '../domain/index.js';
import type { RunResult } from '../experiment/run-file.js';

export interface RunSide {
  run: { experiment: string; run_id: string; environment: unknown; result?: RunResult; status?: string | undefined };
  records: readonly TrialRecord[];
}

export interface MetricComparison {
  /** "<stage> <config>", e.g. "threads intra_op_threads=2". */
  metric: string;
  stage: string;
  config: string;
  trials: { before: number; after: number };
  throughput_ratio: Interval | null;
  verdict: SpeedVerdict;
  memory_ratio: Interval | null;
  memory_verdict: MemoryVerdict;
}

export interface BeforeAfter {
  before: { experiment: string; run_id: string };
  after: { experiment: string; run_id: string };
  noise_band: number;
  metrics: MetricComparison[];
  chosen: { param: string; before: ParamValue | null; after: ParamValue | null; changed: boolean }[];
  environment_warnings: string[];
  warnings: string[];
}

/** Trials of a run grouped by stage and their whole config: the same stage and values measure the same thing. */
function groups(
  side: RunSide,
): Map<string, { stage: string; config: Record<string, ParamValue>; trials: TrialRecord[] }> {
  const out = new Map<string, { stage: string; config: Record<string, ParamValue>; trials: TrialRecord[] }>();
  for (const r of side.records) {
    if (r.outcome !== 'ok' || r.steps.length === 0) continue;
    const key = `${r.stage}\u0000${JSON.stringify(Object.entries(r.config).sort(([x], [y]) => x.localeCompare(y)))}`;
    const g = out.get(key) ?? { stage: r.stage, config: r.config, trials: [] };
    g.trials.push(r);
    out.set(key, g);
  }
  return out;
}

/** The parameters that vary between a stage's trials (in either run), for naming its configs. */
function varying(sides: readonly RunSide[], stage: string): string[] {
  const values = new Map<string, Set<string>>();
  for (const side of sides) {
    for (const r of side.records.filter((t) => t.stage === stage)) {
      for (const [k, v] of Object.entries(r.config)) values.set(k, (values.get(k) ?? new Set()).add(JSON.stringify(v)));
    }
  }
  return [...values]
    .filter(([k, v]) => v.size > 1 || k === 'batch_size')
    .map(([k]) => k)
    .sort();
}

export function compareRuns(before: RunSide, after: RunSide, opts: { noiseBand?: number } = {}): BeforeAfter {
  const band = opts.noiseBand ?? 0.02;
  const gb = groups(before);
  const ga = groups(after);
  const metrics: MetricComparison[] = [];
  const few: string[] = [];
  const varyingByStage = new Map<string, string[]>();
  for (const [key, b] of gb) {
    const a = ga.get(key);
    if (!a) continue;
    const names = varyingByStage.get(b.stage) ?? varying([before, after], b.stage);
    varyingByStage.set(b.stage, names);
    const config = names
      .filter((k) => b.config[k] !== undefined)
      .map((k) => `${k}=${String(b.config[k])}`)
      .join(' ');
    const rates = (ts: TrialRecord[]) =>
      ts.map((t) => ratioThroughput(t.steps)).filter((v): v is number => v !== null && v > 0);
    const mem = (ts: TrialRecord[]) =>
      ts.map((t) => t.peak_device_bytes ?? t.peak_rss_bytes).filter((v): v is number => v !== null && v > 0);
    // A CI that excludes 1 is a test at alpha = 0.05; the verdict also needs it outside the noise band.
    const throughput = welchRatioInterval(rates(b.trials), rates(a.trials), 0.05);
    const memory = welchRatioInterval(mem(b.trials), mem(a.trials), 0.05);
    if (!throughput) few.push(`${b.stage} ${config}`.trim());
    metrics.push({
      metric: `${b.stage} ${config}`.trim(),
      stage: b.stage,
      config,
      trials: { before: b.trials.length, after: a.trials.length },
      throughput_ratio: throughput,
      verdict: speedVerdict(direction(throughput, band)),
      memory_ratio: memory,
      memory_verdict: memoryVerdict(direction(memory, band)),
    });
  }
  const warnings: string[] = [];
  if (few.length > 0)
    warnings.push(
      `${few.length} metric(s) have fewer than ${MIN_TRIALS_FOR_CI} trials on a side, so they get no CI and no ` +
        `verdict (the trial is the unit of variance): ${few.slice(0, 5).join('; ')}${few.length > 5 ? '; ...' : ''}`,
    );
  if (metrics.length === 0)
    warnings.push(
      'the two runs share no measured config (same stage name and values): nothing to compare; ' +
        'run the same experiment twice',
    );
  for (const [side, which] of [
    [before, 'before'],
    [after, 'after'],
  ] as const) {
    if (!isFinished(side.run))
      warnings.push(
        `the ${which} run ${side.run.run_id} did not finish (status ${side.run.status ?? 'unknown'}): ` +
          'its metrics cover only the trials it completed and its chosen config may be missing; ' +
          'resume it (tunebench run --resume <run-dir>) and compare again',
      );
  }
  if (before.run.experiment !== after.run.experiment)
    warnings.push(`different experiments: "${before.run.experiment}" before, "${after.run.experiment}" after`);
  const cb = before.run.result?.chosen ?? {};
  const ca = after.run.result?.chosen ?? {};
  const params = [...new Set([...Object.keys(cb), ...Object.keys(ca)])];
  const chosen = params.map((p) => ({
    param: p,
    before: cb[p] ?? null,
    after: ca[p] ?? null,
    changed: cb[p] !== ca[p],
  }));
  return {
    before: { experiment: before.run.experiment, run_id: before.run.run_id },
    after: { experiment: after.run.experiment, run_id: after.run.run_id },
    noise_band: band,
    metrics,
    chosen,
    environment_warnings: environmentDifferences(
      before.run.environment as Fingerprint,
      after.run.environment as Fingerprint,
    ),
    warnings,
  };
}

/** What differs between two fingerprints that could explain a change: device, driver, libraries. */
/** What can differ between two environment fingerprints; `version` names its package in `name`. */
export type EnvironmentField =
  'fingerprint' | 'host' | 'CPU' | 'GPU' | 'GPU driver' | 'memory' | 'kernel' | 'version' | 'workload';

/** One difference between two fingerprints: the typed fact, and its sentence for the reader. */
export interface EnvironmentDifference {
  field: EnvironmentField;
  /** The package whose version differs (field `version`). */
  name?: string;
  text: string;
}

/** The differences between two fingerprints, as typed facts (a missing fingerprint is one of field `fingerprint`). */
export function environmentDiffs(a: Fingerprint | undefined, b: Fingerprint | undefined): EnvironmentDifference[] {
  if (!a || !b)
    return [
      {
        field: 'fingerprint',
        text: 'an environment fingerprint is missing, so the runs cannot be checked for the same machine',
      },
    ];
  const out: EnvironmentDifference[] = [];
  const diff = (field: EnvironmentField, x: unknown, y: unknown, name?: string) => {
    if (JSON.stringify(x) !== JSON.stringify(y))
      out.push({
        field,
        ...(name === undefined ? {} : { name }),
        text: `${name === undefined ? field : `${name} version`} differs: ${JSON.stringify(x)} before, ${JSON.stringify(y)} after`,
      });
  };
  diff('host', a.host, b.host);
  diff('CPU', a.cpu, b.cpu);
  diff('GPU', a.gpu?.name ?? null, b.gpu?.name ?? null);
  diff('GPU driver', a.gpu?.driver ?? null, b.gpu?.driver ?? null);
  diff('memory', a.memory_bytes, b.memory_bytes);
  diff('kernel', a.kernel, b.kernel);
  for (const k of [...new Set([...Object.keys(a.versions ?? {}), ...Object.keys(b.versions ?? {})])].sort())
    diff('version', a.versions?.[k], b.versions?.[k], k);
  // The workload's own stack, where both runs recorded one (runs before it was kept have none).
  if (a.workload !== undefined && b.workload !== undefined) {
    const stack = (w: WorkloadStack | null): Record<string, string | null> => ({
      python: w?.python ?? null,
      ...w?.packages,
      cuda: w?.cuda ?? null,
    });
    const [x, y] = [stack(a.workload), stack(b.workload)];
    for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
      const [before, after] = [JSON.stringify(x[k] ?? null), JSON.stringify(y[k] ?? null)];
      if (before !== after)
        out.push({
          field: 'workload',
          name: k,
          text: `the workload's ${k === 'cuda' ? 'CUDA (of torch)' : k} version differs: ${before} before, ${after} after`,
        });
    }
  }
  return out;
}

/** The differences between two fingerprints, in words. */
export function environmentDifferences(a: Fingerprint | undefined, b: Fingerprint | undefined): string[] {
  return environmentDiffs(a, b).map((d) => d.text);
}

/**
 * Regressions beyond a threshold that are significant: slower, with the whole throughput CI below
 * 1 - pct/100.
 */
export function regressions(cmp: BeforeAfter, pct: number): MetricComparison[] {
  return cmp.metrics.filter(
    (m) => m.verdict === 'slower' && m.throughput_ratio !== null && m.throughput_ratio.high < 1 - pct / 100,
  );
}
