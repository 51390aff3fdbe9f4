// bench:max-batch, "to a max that holds": the whole max-batch stage as `tunebench run` runs it, side by
// side with power-then-bisect confirmed the same way and with in-process finders, on real PyTorch trials;
// then every answer is run directly, in fresh processes, for a training-length run under the same cap.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { toProbe } from '../../harness/engine/stages/max-batch.js';
import { confirmationMeasure, growthPhrase, holds } from '../../harness/search/confirmation.js';
import type { BandRun } from '../../harness/search/band-model.js';
import { repeatBoundary } from '../../harness/search/boundary-repeat.js';
import type { ProbeFn, ProbeResult } from '../../harness/search/probe.js';
import { powerThenBisect } from '../../harness/search/reference.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { createWorkload } from '../../harness/workloads/index.js';
import type { TrialRecord } from '../../harness/domain/index.js';
import { CLI, ROOT, tempDir } from '../support/paths.js';
import { benchTrials } from './bench-trials.js';
import { journal, runDir } from '../support/runs.js';
import { readRunJson } from '../../harness/experiment/run-file.js';
import { loadExperiment } from '../../harness/engine/load.js';

export interface Answer {
  strategy: string;
  batch: number | null;
  seconds: number;
  /** Seconds until the answer was confirmed (ours: the run at the max that reached its plateau). */
  toHold?: number;
  trials: number;
  note: string;
  /** Direct fresh-process runs at the answer that passed, of how many. */
  held?: { ok: number; of: number };
}

export interface HoldsCase {
  experiment: string;
  answers: Answer[];
  directSteps: number;
}

/**
 * Runs the experiment's first stage (max-batch) through the CLI and reads what it answered and when it held:
 * the max (the run at the answer that reached its plateau), and the first batch known to hold (`first_hold`
 * in run.json, the stage's own record). Times count from the CLI's launch.
 */
async function ours(path: string, name: string, label = ''): Promise<Answer[]> {
  const out = tempDir('tunebench-bench-');
  const t0 = Date.now();
  const r = await execa(process.execPath, [CLI, 'run', path, '--out', out, '--quiet'], { reject: false, all: true });
  const seconds = (Date.now() - t0) / 1000;
  if (r.exitCode !== 0) throw new Error(`tunebench run ${path} failed:\n${r.all}`);
  const dir = runDir(out, name);
  const records = journal(dir);
  const chosen = (
    JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as { config: { batch_size?: number } }
  ).config.batch_size;
  const held = records.find((t) => t.config['batch_size'] === chosen && t.outcome === 'ok' && holds(t.memory_growth));
  const end = (t: TrialRecord) => (Date.parse(t.started_at) - t0) / 1000 + t.wall_seconds;
  const stage = readRunJson(dir, 'bench:max-batch reads the stage').result?.stages[0];
  const first = stage?.kind === 'max-batch' ? stage.result.first_hold : undefined;
  const firstAt = first ? records.find((t) => t.index === first.trial) : undefined;
  return [
    {
      strategy: `tunebench run (the stage as shipped${label})`,
      batch: chosen ?? null,
      seconds,
      ...(held ? { toHold: end(held) } : {}),
      trials: records.length,
      note: held
        ? `held: trial ${held.index}, plateau at step ${(held.memory_growth as { at_step: number }).at_step + 1}`
        : 'no run at the answer reached a plateau',
    },
    {
      strategy: `tunebench run${label}: the first batch known to hold (first_hold)`,
      batch: first?.batch ?? null,
      seconds: firstAt ? end(firstAt) : seconds,
      ...(firstAt ? { toHold: end(firstAt) } : {}),
      trials: first?.trials ?? records.length,
      note: first ? `trial ${first.trial}, ${growthPhrase(first.memory_growth)}` : 'none held',
    },
  ];
}

/** Power-then-bisect on short forked probes, then its answer confirmed as ours is; a failure bisects below with long runs. */
async function powerThenBisectConfirmed(path: string): Promise<Answer> {
  const bench = benchTrials(path);
  const { experiment, stage } = bench;
  const warmupSteps = experiment.measure.warmup_steps ?? 1;
  const run = async (batch: number, long: boolean) =>
    toProbe(
      batch,
      long ? 'confirm' : 'probe',
      await bench.trial(
        batch,
        long ? 'confirm' : 'probe',
        long
          ? confirmationMeasure({
              warmupSteps,
              minSteps: stage.confirm_steps,
              maxSteps: stage.confirm_max_steps,
              epochs: stage.confirm_epochs,
            })
          : { warmupSteps, steps: stage.steps },
      ),
    );
  const t0 = Date.now();
  const m = stage.multiple_of;
  const short: ProbeFn = (b) => run(b, false);
  const found = await powerThenBisect(short, { init: 2, multipleOf: m, ceiling: stage.ceiling });
  let trials = found.probes;
  let lo = 0;
  let hi = found.max === null ? 0 : found.max / m;
  let answer: number | null = null;
  // Every long run, for the band model that places the answer as the stage places its own.
  const longRuns: BandRun[] = [];
  const long = async (batch: number): Promise<ProbeResult> => {
    const r = await run(batch, true);
    trials += 1;
    if (r.outcome === 'ok' || r.outcome === 'oom') longRuns.push({ batch, ok: r.ok });
    return r;
  };
  let longFail: number | null = null;
  let bisected: number | null = null;
  if (found.max !== null) {
    const first = await long(found.max);
    if (first.ok && holds(first.growth)) answer = found.max;
    else {
      // Bisect between nothing known and the failure with long runs: what a user does after a failed training run.
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        const r = await long(mid * m);
        if (r.ok && holds(r.growth)) lo = mid;
        else hi = mid;
      }
      longFail = hi;
      answer = lo > 0 ? lo * m : null;
      bisected = answer;
    }
  }
  let band = '';
  if (answer !== null && stage.repeat_boundary > 0) {
    // The same boundary repeats and band model as the stage's (harness/search/boundary-repeat.ts); the
    // failure above is the long one, else power-then-bisect's short one (a short failure fails long too).
    const b = await repeatBoundary({
      run: (batch) => long(batch),
      m,
      lo: answer / m,
      hi: longFail ?? answer / m + 1,
      repeats: stage.repeat_boundary,
      steps: stage.confirm_steps,
      maxRisk: stage.max_risk,
      known: longRuns.slice(),
    });
    if (b.lo * m !== answer) band = `; the band model moved it from ${answer}`;
    answer = b.lo > 0 ? b.lo * m : null;
  }
  bench.close();
  const seconds = (Date.now() - t0) / 1000;
  return {
    strategy: 'power-then-bisect, then confirmed as ours',
    batch: answer,
    seconds,
    toHold: seconds,
    trials,
    note:
      (longFail === null
        ? `found ${found.max}, confirmed`
        : `found ${found.max}, failed its confirmation; long runs bisected to ${bisected ?? 'none'}`) + band,
  };
}

/** What inprocess_finder.py prints last: its answer (a positive whole batch, or none), trials and any error. */
const FINDER_LINE = z.object({
  answer: z.number().int().positive().nullable(),
  trials: z.number().int().nonnegative(),
  error: z.string().nullable(),
});

/** A Lightning- or Accelerate-style finder inside one Python process under the experiment's address-space cap. */
function inProcess(finder: 'binsearch' | 'shrink', capBytes: number): Answer {
  const t0 = Date.now();
  const r = spawnSync(
    'prlimit',
    [`--as=${capBytes}`, '/usr/bin/python3', join(ROOT, 'test/bench/programs/inprocess_finder.py'), finder],
    { encoding: 'utf8', timeout: 600_000 },
  );
  const seconds = (Date.now() - t0) / 1000;
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  // The finder's last line, checked: a crash (a segfault, std::bad_alloc) prints none or garbage.
  let parsed: z.infer<typeof FINDER_LINE> | undefined;
  try {
    const checked = FINDER_LINE.safeParse(JSON.parse(line));
    parsed = checked.success ? checked.data : undefined;
  } catch {
    parsed = undefined;
  }
  const crashed =
    parsed === undefined
      ? `crashed (exit ${r.status ?? r.signal}): ${r.stderr.trim().split('\n').at(-1) ?? ''}`
      : parsed.error;
  return {
    strategy:
      finder === 'binsearch'
        ? 'in-process binsearch (Lightning: init 2, 3 steps, margin 5%)'
        : 'in-process shrink x0.9 from 128 (Accelerate)',
    batch: parsed?.answer ?? null,
    seconds,
    // Its answer is known when the process ends; the direct runs say whether it holds.
    toHold: seconds,
    trials: parsed?.trials ?? 0,
    note: crashed ? `crashed: ${crashed.slice(0, 120)}` : 'ran to its end',
  };
}

/**
 * Runs each of `batches` directly `n` times, in turn (a round visits every batch), in fresh processes for
 * `steps` steps across 2 epochs under the experiment's cap. Returns, per batch, the runs that passed.
 */
export async function direct(
  path: string,
  batches: number[],
  n: number,
  steps: number,
): Promise<Map<number, { ok: number; of: number }>> {
  const { experiment, source } = loadExperiment(path);
  const workload = createWorkload(experiment.workload, experiment.seed, source);
  const scratch = tempDir('tunebench-bench-');
  const held = new Map(batches.map((b) => [b, { ok: 0, of: 0 }]));
  for (let i = 0; i < n; i++)
    for (const batch of batches) {
      const r = await runTrial(
        { workload, limits: experiment.limits, scratchDir: scratch },
        {
          index: i,
          stage: 'direct',
          role: { kind: 'final-confirm' },
          config: { batch_size: batch },
          measure: { warmupSteps: 1, steps, epochs: 2 },
        },
      );
      const h = held.get(batch)!;
      h.of += 1;
      if (r.outcome === 'ok') h.ok += 1;
    }
  return held;
}

export async function holdsCase(experimentPath: string, directRuns: number, directSteps: number): Promise<HoldsCase> {
  const path = join(ROOT, experimentPath);
  const { experiment } = loadExperiment(path);
  const cap = experiment.limits.memory!;
  const answers = [
    ...(await ours(path, experiment.name)),
    await powerThenBisectConfirmed(experimentPath),
    inProcess('binsearch', cap),
    inProcess('shrink', cap),
    // The same experiment with the in-process bracket (answers[4], [5]): attempts in one forked process,
    // then the confirmation and the failure above it in processes of their own.
    ...(await ours(path.replace(/\.yaml$/, '-bracket.yaml'), `${experiment.name}-bracket`, ', bracket: in-process')),
  ];
  for (const a of answers)
    if (a.batch !== null) a.held = (await direct(path, [a.batch], directRuns, directSteps)).get(a.batch);
  return { experiment: experimentPath, answers, directSteps };
}

export function holdsTable(c: HoldsCase): string {
  const rows = c.answers.map(
    (a) =>
      `| ${a.strategy} | ${a.batch ?? 'none'} | ${a.seconds.toFixed(1)} s | ${a.toHold === undefined ? '-' : `${a.toHold.toFixed(1)} s`} | ${a.trials} | ` +
      `${a.held ? `${a.held.ok}/${a.held.of}` : '-'} | ${a.note} |`,
  );
  return [
    `| strategy | answer | wall time | to a batch that holds | trials | held ${c.directSteps} direct steps | note |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
