// Synthetic nights for history tests and benchmarks: copies of a real finished run (the report
// fixture: max batch, sweep, compare) whose throughput is scaled per night, in the stage results and
// in the journal's step times alike, as if the machine had been that much faster or slower.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRng } from '../../harness/stats/rng.js';
import { readJournal } from '../../harness/store/journal.js';
import { FIXTURES } from './paths.js';
import { REPORT_FIXTURE } from './runs.js';
import type { RunResult } from '../../harness/experiment/run-file.js';

/**
 * The nightly tests' experiment (name `nightly`): a small deterministic run on the simulated GPU in
 * which every stage kind gives the history a metric.
 */
export const NIGHTLY_EXPERIMENT = join(FIXTURES, 'experiments', 'nightly.yaml');

interface RunJson {
  experiment: string;
  run_id: string;
  started_at: string;
  finished_at?: string;
  status?: string;
  experiment_file: string;
  resolved: Record<string, unknown>;
  environment: { cpu: { model: string }; git_commit: string | null; git_root?: string | null };
  result: RunResult;
}

/** Scales every throughput interval of a result (evidence, sweep configs, compare arms) by f. */
function scaleResult(result: RunResult, f: number): void {
  const scale = (i: { estimate: number; low: number; high: number } | null | undefined) => {
    if (!i) return;
    i.estimate *= f;
    i.low *= f;
    i.high *= f;
  };
  for (const e of Object.values(result.evidence)) scale(e.samples_per_second);
  for (const s of result.stages) {
    // A stage's evidence is its own copy (run.json holds it twice), so it is scaled too.
    for (const e of Object.values(s.evidence)) scale(e.samples_per_second);
    if (s.kind === 'sweep') for (const c of s.result.configs) scale(c.throughput);
    if (s.kind === 'compare') for (const a of s.result.arms) scale(a.throughput);
  }
}

export interface Night {
  /** Throughput relative to the fixture run. */
  factor: number;
  /** Changes to apply to run.json, e.g. another chosen value or another CPU. */
  edit?: (run: RunJson) => void;
}

/**
 * Writes one run directory per night under <out>/<experiment>/, one day apart, copies of the run in
 * `from` (default the report fixture); returns their paths.
 */
export function writeNights(
  out: string,
  nights: readonly Night[],
  start = Date.UTC(2026, 9, 1, 2, 0, 0),
  from = REPORT_FIXTURE,
): string[] {
  const base = JSON.parse(readFileSync(join(from, 'run.json'), 'utf8')) as RunJson;
  const records = readJournal(join(from, 'trials.jsonl')).records;
  return nights.map((night, i) => {
    const run = structuredClone(base);
    const id = `night-${String(i + 1).padStart(4, '0')}`;
    run.run_id = id;
    run.result.run_id = id;
    run.started_at = new Date(start + i * 86_400_000).toISOString();
    run.finished_at = new Date(start + i * 86_400_000 + 600_000).toISOString();
    scaleResult(run.result, night.factor);
    night.edit?.(run);
    const dir = join(out, base.experiment, id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'run.json'), JSON.stringify(run));
    const scaled = records.map((r) =>
      JSON.stringify({ ...r, steps: r.steps.map((s) => ({ ...s, seconds: s.seconds / night.factor })) }),
    );
    writeFileSync(join(dir, 'trials.jsonl'), `${scaled.join('\n')}\n`);
    return dir;
  });
}

/** Factors of n nights: level 1 with uniform +/-noise, times `step` from the 0-based night `at` on. */
export function plantedNights(n: number, opts: { at: number; step: number; noise: number; seed: number }): Night[] {
  const rng = createRng(opts.seed);
  return Array.from({ length: n }, (_, i) => ({
    factor: (i >= opts.at ? opts.step : 1) * (1 + (rng() * 2 - 1) * opts.noise),
  }));
}
