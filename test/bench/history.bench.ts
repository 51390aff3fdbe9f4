// History benchmark. First the calibration of the nightly gate on simulated histories
// (nightly-calibration.ts): false exit 3 per night and nights to find a step, for the previous
// gate, the step detector, a plain t test against a window and the new series gate. Then
// `tunebench history` on 1,000 synthetic nights (copies of a real run with a planted 15% regression
// at night 700 and +/-3% noise), under 5 s. Writes its RESULTS.md sections.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, tempDir } from '../support/paths.js';
import { plantedNights, writeNights } from '../support/history.js';
import { writeSection } from './results.js';
import {
  CONFIRM_TRIALS,
  HORIZON,
  METRICS,
  runSeries,
  TRIAL_NOISE,
  TRIALS,
  type SeriesOutcome,
} from './nightly-calibration.js';
import { NIGHTLY_DEFAULTS } from '../../harness/stats/nightly.js';
import type { NightNoise } from '../support/night-sim.js';

const SERIES = Number(process.env['BENCH_HISTORY_SERIES'] ?? 200);
const DETECTOR_SERIES = Math.min(SERIES, 40);
const LENGTHS = [30, 60, 100];
const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
const median = (xs: (number | null)[]) => {
  const s = xs.map((x) => x ?? Infinity).sort((a, b) => a - b);
  const m = s[Math.floor((s.length - 1) / 2)]!;
  return Number.isFinite(m) ? String(m) : `> ${HORIZON}`;
};
const never = (xs: (number | null)[]) => pct(xs.filter((x) => x === null).length / xs.length);

function calibration(): string {
  const rows: string[] = [];
  let stationaryOk = true;
  const stationary: [NightNoise, string][] = [
    ['gaussian', 'Gaussian'],
    ['t3', 'heavy-tailed t3'],
    ['ar1', 'AR(1), phi 0.6'],
  ];
  for (const [noise, label] of stationary) {
    for (const spread of [0.02, 0.05]) {
      for (const nights of LENGTHS) {
        const outs: SeriesOutcome[] = [];
        for (let s = 0; s < SERIES; s++)
          outs.push(
            runSeries(
              { nights, metrics: METRICS, trials: TRIALS, trialNoise: TRIAL_NOISE, spread, noise, shared: 0.5 },
              10_000 * nights + 100 * spread * 1000 + s,
              {},
              false,
            ),
          );
        const sum = (f: (o: SeriesOutcome) => number) => outs.reduce((a, o) => a + f(o), 0);
        const oldN = sum((o) => o.nights.old);
        const gateN = sum((o) => o.nights.gate);
        const exit = sum((o) => o.gateExit) / gateN;
        stationaryOk &&= exit <= 0.01;
        rows.push(
          `| ${label}, spread ${spread * 100}%, ${nights} nights ` +
            `| ${pct(sum((o) => o.oldSlowerMetricNights) / (oldN * METRICS))} ` +
            `| ${pct(sum((o) => o.oldExit) / oldN)} | ${pct(sum((o) => o.plainExit) / sum((o) => o.nights.plain))} ` +
            `| ${pct(sum((o) => o.gateAlarm) / gateN)} | **${pct(exit)}** ${exit <= 0.01 ? 'pass' : '**FAIL**'} ` +
            `| ${pct(sum((o) => o.gateExitPersistent) / gateN)} |`,
        );
      }
    }
  }
  const steps: string[] = [];
  let stepsOk = true;
  for (const [factor, spread, target] of [
    [0.95, 0.02, 3],
    [0.9, 0.05, 3],
    [0.9, 0.02, null],
    [0.95, 0.05, null],
  ] as const) {
    for (const nights of LENGTHS) {
      const at = Math.max(15, nights - HORIZON);
      const outs: SeriesOutcome[] = [];
      for (let s = 0; s < SERIES; s++)
        outs.push(
          runSeries(
            {
              nights,
              metrics: METRICS,
              trials: TRIALS,
              trialNoise: TRIAL_NOISE,
              spread,
              noise: 'gaussian',
              shared: 0.5,
              step: { at, factor },
            },
            7_000_000 + 10_000 * nights + Math.round(1000 * factor) + s,
            {},
            s < DETECTOR_SERIES,
          ),
        );
      const d = (f: (o: SeriesOutcome) => number | null, n = outs.length) => outs.slice(0, n).map(f);
      const gate = d((o) => o.delay.gate);
      const med = median(gate);
      const ok = target === null || Number(med) <= target;
      if (target !== null) stepsOk &&= ok;
      steps.push(
        `| ${Math.round((1 - factor) * 100)}% step, ` +
          `spread ${spread * 100}%, ${nights} nights (step at night ${at + 1}) | ${median(d((o) => o.delay.old))} ` +
          `(${never(d((o) => o.delay.old))}) | ${median(d((o) => o.delay.detector, DETECTOR_SERIES))} ` +
          `(${never(d((o) => o.delay.detector, DETECTOR_SERIES))}) ` +
          `| ${median(d((o) => o.delay.plain))} (${never(d((o) => o.delay.plain))}) | **${med}** ` +
          `(${never(gate)})${target === null ? '' : ok ? ` <= ${target}: pass` : ` > ${target}: **FAIL**`} |`,
      );
    }
  }
  const o = NIGHTLY_DEFAULTS;
  return [
    '## Nightly gate: calibration on simulated histories',
    '',
    `Command: \`npm run bench:history\` (${SERIES} histories per row; ` +
      `the step detector, the slowest, on the first ${DETECTOR_SERIES}). Each night: ${METRICS} metrics, ` +
      `each the geometric mean of ${TRIALS} trials with ${TRIAL_NOISE * 100}% trial noise, times a night-to-night ` +
      `factor (half of its variance shared by the night's metrics). Every strategy is the shipped code: the ` +
      'previous gate (the latest run against the run before: Welch CI on the trials, 2% noise band, exit 3 past 5%), ' +
      `the step detector (\`detectChangePoints\`), a plain t test of the last night against the 12 before it ` +
      `(one-sided p < 0.05, as Mozilla's Perfherder does), and the new gate (\`NightlyGate\`: window ${o.window}, ` +
      `looks ${o.looks.join(', ')} nights, alarm budget ${o.alpha} a night for all metrics, persist ${o.persist}). ` +
      `(\`harness/stats/nightly.ts\`; \`tunebench history\` does not run it yet: ` +
      'its gate is still the previous one.) An alarm of the new gate is confirmed by re-measuring the flagged ' +
      `metrics with ${CONFIRM_TRIALS} trials: exit 3 only when the re-measured value is flagged too.`,
    '',
    'False exit 3 on stationary histories, per night and experiment (all metrics together) unless said otherwise. ' +
      'Target for the new gate: <= 1%. "Night persists": the confirmation re-measures on a night whose slowness ' +
      'persists (only the trials are new), the pessimistic case; the target column assumes that a re-run draws the ' +
      'night-to-night factor again, as it does when that spread comes from the run (process, placement, clocks).',
    '',
    '| stationary history | previous gate: a metric called slower | previous gate: exit 3 at 5% | plain t test ' +
      'vs 12 nights | new gate: alarms | new gate: exit 3 after confirmation | new gate: exit 3, night persists |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Nights from a step to the first exit 3 (1: the step's own night), ` +
      `median and in brackets the share not found within ${HORIZON} nights (or by the end of the history). ` +
      'Targets for the new gate: a 10% step at 5% spread and a 5% step at 2% spread, median <= 3 nights.',
    '',
    '| step | previous gate (exit 3 at 5%) | step detector | plain t test | new gate |',
    '| --- | --- | --- | --- | --- |',
    ...steps,
    '',
    `Stationary target (<= 1% false exits, every row): ${stationaryOk ? 'met' : '**not met**'}. ` +
      `Step targets: ${stepsOk ? 'met' : '**not met**'}.`,
  ].join('\n');
}

const NIGHTS = 1000;

async function timed(args: string[]): Promise<{ seconds: number; stdout: string }> {
  const t0 = process.hrtime.bigint();
  const r = await execa(process.execPath, [CLI, ...args], { reject: false });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  assert.equal(r.exitCode, 0, r.stderr);
  return { seconds, stdout: r.stdout };
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const cal = calibration();
  writeSection('nightly-gate', cal);
  process.stdout.write(`${cal}\n(calibration: ${((Date.now() - t0) / 1000).toFixed(0)} s)\n\n`);
  const out = tempDir();
  writeNights(out, plantedNights(NIGHTS, { at: 699, step: 0.85, noise: 0.03, seed: 1000 }));
  const cold = await timed(['history', out, '--json']);
  const warm = await timed(['history', out, '--json']);
  // Without the index cache again, to separate reading 1,000 run.json files from the analysis.
  rmSync(join(out, '.history-index.json'));
  const cold2 = await timed(['history', out, '--json']);
  const h = (
    JSON.parse(warm.stdout) as {
      experiments: {
        runs: number;
        metrics: { name: string }[];
        change_points: { metric: string; index: number }[];
        gate: {
          decided_by: string;
          series: { metrics: { name: string; changes: { run_id: string; how: string }[] }[] };
        };
      }[];
    }
  ).experiments[0]!;
  // The series gate: the planted step becomes the reference by persisting, at night 700 exactly.
  const levels = h.gate.series.metrics.map((m) => m.changes.map((c) => `${c.run_id}:${c.how}`).join(' '));
  const gateOk = h.gate.decided_by === 'series' && levels.every((l) => l === 'night-0700:persisted');
  // Every series: the throughput ones carry the planted step, the max batch must stay unmarked.
  const marks = h.change_points.map((c) => c.index + 1);
  const throughputSeries = h.metrics.filter((m) => m.name.includes('samples/s')).length;
  const hit = marks.filter((n) => Math.abs(n - 700) <= 1).length;
  const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
  const md = [
    '## History: 1,000 runs',
    '',
    `Command: \`npm run bench:history\`. ${NIGHTS} finished runs of the report fixture (max batch, sweep, compare) ` +
      'under one reports folder, a planted 15% regression from night 700 and uniform +/-3% noise; ' +
      `\`tunebench history <dir> --json\` reads every run, fits ${h.metrics.length} series, replays the ` +
      'nightly gate over them, renders the trend chart (Vega-Lite to SVG) and writes history.html/md/json. ' +
      'Wall time of the whole command, Node start included.',
    '',
    '| check | target | measured | |',
    '| --- | --- | --- | --- |',
    `| history of 1,000 runs, no index cache | < 5 s | ${cold.seconds.toFixed(2)} s (again after deleting ` +
      `the cache: ${cold2.seconds.toFixed(2)} s) | ${pass(Math.max(cold.seconds, cold2.seconds) < 5)} |`,
    `| history of 1,000 runs, index cached | < 5 s | ${warm.seconds.toFixed(2)} s | ${pass(warm.seconds < 5)} |`,
    `| series gate on all ${levels.length} gated series | the planted step becomes the reference at night ` +
      `700 by persisting, nothing else | ${[...new Set(levels)].join('; ') || 'none'} | ${pass(gateOk)} |`,
    `| change points on all ${h.metrics.length} series (${throughputSeries} throughput ` +
      'series carry the planted step) | one per throughput series at night 700 +/- 1, ' +
      `none elsewhere | ${hit} at night 700 +/- 1, ${marks.length - hit} elsewhere (${marks.join(', ') || 'none'}) ` +
      `| ${pass(hit === throughputSeries && hit === marks.length)} |`,
  ].join('\n');
  writeSection('history', md);
  process.stdout.write(`${md}\n`);
}

await main();
