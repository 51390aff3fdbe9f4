// Benchmark: race against grid on the real worker-thread pipeline (experiments/onnx-pipeline.yaml).
// Both run full-length rounds; grid runs every config for as many rounds as race may run at most.
// Targets: race's pick reaches >= 98% of grid's best throughput, and race spends less than grid's
// trial-seconds (it eliminates from round 3 on, at the planned looks, only what is significantly
// slower, so on a pipeline where many configs tie it may save little).
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Constraints } from '../../harness/search/constraints.js';
import { configKey, grid, type ParamSpec } from '../../harness/search/space.js';
import { runSweep, RACE_MIN_ROUNDS, type ArmTrialFn, type SweepResult } from '../../harness/search/sweep.js';
import { SWEEP_REPEATS } from '../../harness/experiment/schema.js';
import { ratioThroughput } from '../../harness/stats/throughput.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { createWorkload } from '../../harness/workloads/index.js';
import { ROOT, tempDir } from '../support/paths.js';
import { writeSection } from './results.js';
import { noteText } from '../../harness/report/notes.js';
import { loadExperiment } from '../../harness/engine/load.js';

const EXPERIMENT = 'experiments/onnx-pipeline.yaml';

async function main(): Promise<void> {
  const { experiment, source } = loadExperiment(join(ROOT, EXPERIMENT));
  const stage = experiment.stages[0]!;
  if (stage.kind !== 'sweep') throw new Error(`${EXPERIMENT}: the first stage must be a sweep`);
  const workload = createWorkload(experiment.workload, experiment.seed, source);
  const names = Object.keys(stage.params);
  const { runnable, pruned } = new Constraints(stage.constraints ?? {}).split(
    grid(stage.params as Record<string, ParamSpec>).map((c) => ({ ...workload.fixedParams, ...c })),
  );
  const configs = runnable.map((c) => Object.fromEntries(names.map((n) => [n, c[n]!])));
  const steps = stage.steps ?? experiment.measure.steps ?? 10;
  const scratch = tempDir('tunebench-bench-');
  let index = 0;
  const run: ArmTrialFn = async (config, o) => {
    const r = await runTrial(
      { workload, limits: experiment.limits, scratchDir: scratch },
      {
        index: index++,
        stage: 'bench',
        role: { kind: o.role },
        config,
        measure: { warmupSteps: experiment.measure.warmup_steps ?? 2, steps },
      },
    );
    return { outcome: r.outcome, reason: r.reason, steps: r.steps, wallSeconds: r.wall_seconds };
  };
  const options = {
    configs,
    keyOf: (c: Record<string, unknown>) => configKey(c as never, names),
    // Race's most rounds; grid runs every config this many times.
    repeats: stage.repeats ?? SWEEP_REPEATS.race,
    minRounds: stage.min_rounds ?? RACE_MIN_ROUNDS,
    noiseBand: stage.noise_band ?? 0.02,
    budget: {},
    costOrder: stage.cost ?? names,
  };
  process.stderr.write(`grid: ${configs.length} configs x ${options.repeats} repeats (${pruned.length} pruned)\n`);
  const gridResult = await runSweep(run, { ...options, strategy: 'grid' });
  process.stderr.write(`race\n`);
  const raceResult = await runSweep(run, { ...options, strategy: 'race' });

  for (const [label, r] of [
    ['grid', gridResult],
    ['race', raceResult],
  ] as const) {
    for (const a of r.arms) {
      const per = a.trials.map((t) => (t.outcome === 'ok' ? (ratioThroughput(t.steps) ?? 0).toFixed(0) : t.outcome));
      process.stderr.write(
        `${label} ${a.key.padEnd(52)} ${a.status.padEnd(10)} ${per.join(' ')} ` +
          `ci ${a.ci ? `${a.ci.low.toFixed(0)}..${a.ci.high.toFixed(0)}` : '-'}\n`,
      );
    }
  }
  const gridThroughput = (key: string) => gridResult.arms.find((a) => a.key === key)?.ci?.estimate ?? NaN;
  const best = gridResult.arms.reduce((b, a) => ((a.ci?.estimate ?? 0) > (b.ci?.estimate ?? 0) ? a : b));
  const racePick = raceResult.ranking.chosen!.key;
  const quality = gridThroughput(racePick) / best.ci!.estimate;
  const cost = raceResult.trialSeconds / gridResult.trialSeconds;
  const row = (r: SweepResult, label: string) =>
    `| ${label} | ${r.trials} | ${r.trialSeconds.toFixed(1)} | ${r.ranking.chosen?.key ?? '-'} ` +
    `| ${gridThroughput(r.ranking.chosen?.key ?? '').toFixed(1)} |`;
  const doc = [
    '## Sweep: race against grid on the real pipeline',
    '',
    `Produced by \`npm run bench:sweep\` on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores ` +
      `(${cpus()[0]?.model.trim()}), Node ${process.versions.node}: ${EXPERIMENT}, ${configs.length} configs ` +
      `after pruning ${pruned.length} (${names.join(' x ')}), ${steps} steps per trial. Grid: ${options.repeats} ` +
      `rounds of every config. Race: full rounds, at least ${options.minRounds} and at most ${options.repeats}, ` +
      'eliminating at the planned looks what a round-blocked test finds significantly slower than the leader, ' +
      `stopping when the survivors are within ${(options.noiseBand * 100).toFixed(1)}% of it. ` +
      `Throughputs are grid's measurements (geometric mean over its trials of total samples over total step time).`,
    '',
    "| strategy | trials | trial-seconds | pick | pick's throughput (grid, samples/s) |",
    '| --- | --- | --- | --- | --- |',
    row(gridResult, 'grid'),
    row(raceResult, 'race'),
    '',
    `Grid's best: ${best.key} at ${best.ci!.estimate.toFixed(1)} samples/s.`,
    `**Race's pick reaches ${(quality * 100).toFixed(1)}% of grid's best ` +
      `(target >= 98%: ${quality >= 0.98 ? 'pass' : 'FAIL'}) using ${(cost * 100).toFixed(1)}% of grid's ` +
      `trial-seconds (target < 100%: ${cost < 1 ? 'pass' : 'FAIL'}); race ran ${raceResult.rounds} rounds and ` +
      `eliminated ${raceResult.arms.filter((a) => a.status === 'eliminated').length} of ${configs.length} configs.**`,
    '',
    `Race notes: ${notesLine(raceResult)}. Grid notes: ${notesLine(gridResult)}.`,
  ].join('\n');
  writeSection('sweep', doc);
  process.stdout.write(`${doc}\n`);
}

await main();

/** A sweep's notes as the report words them, then its ranking's sentence (the chosen config's rule). */
function notesLine(r: SweepResult): string {
  return [...r.notes.map(noteText), ...(r.ranking.note ? [r.ranking.note] : [])].join('; ');
}
