// bench:gpu-replay: the max-batch stage on a simulated CUDA workload that replays the H200 records
// (test/support/h200-replay.ts): time to a written, confirmed max against Lightning's recorded 39.4 s on
// the same card and model. Rows: the H200 curve and one that bends upward (18% above the line at its
// max); with --baseline, the same rows under an older build (its dist/harness/cli/main.js) side by side.
//   node dist/test/bench/gpu-replay.bench.js [--scale 1] [--baseline /path/to/main.js] [--json] [--no-write]
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, tempDir } from '../support/paths.js';
import { bent, h200Replay, H200_SMI_ENV, replayExperiment, type ReplaySpec } from '../support/h200-replay.js';
import { writeSection } from './results.js';

interface Row {
  name: string;
  tunebench_seconds: number;
  lightning_seconds: number;
  max_written: number | null;
  boundary: number | null;
  multiple: number;
  confirmed_fresh: boolean;
  /** Extra: the whole command (reports included), the run's own wall (run.json), trials and in-process attempts. */
  command_seconds: number;
  run_seconds: number;
  trials: number;
  attempts: number;
  expected_max: number;
}

interface RunJson {
  wall_seconds: number;
  run_dir: string;
  stages: { result: { max: number | null; smallestFail: number | null; confirmed: boolean } }[];
}

interface Trial {
  role: { kind: string };
  outcome: string;
  config: { batch_size?: number };
  memory_growth?: { verdict: string };
  attempts?: unknown[];
}

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

function runRow(opts: { name: string; spec: ReplaySpec; expected: number; cli: string; scale: number }): Row {
  const dir = tempDir('tunebench-gpu-replay-');
  const file = replayExperiment({ dir, spec: opts.spec, scale: opts.scale });
  const t0 = process.hrtime.bigint();
  const p = spawnSync(process.execPath, [opts.cli, 'run', file, '--out', join(dir, 'runs'), '--json'], {
    env: { ...process.env, ...H200_SMI_ENV },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const launchedMs = Date.now() - seconds * 1000;
  if (p.status !== 0) throw new Error(`${opts.name}: tunebench exited ${p.status}: ${p.stderr.slice(-2000)}`);
  const run = JSON.parse(p.stdout) as RunJson;
  const result = run.stages[0]!.result;
  // The max is written when chosen-config.json is; the reports are drawn after it.
  const written = (statSync(join(run.run_dir, 'chosen-config.json')).mtimeMs - launchedMs) / 1000;
  const trials = readFileSync(join(run.run_dir, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Trial);
  // The max ran in a process of its own (a fresh process, or a fork of a server that never touched the
  // device) until its memory flattened.
  const fresh = trials.some(
    (t) =>
      t.role.kind !== 'bracket' &&
      t.outcome === 'ok' &&
      t.config.batch_size === result.max &&
      t.memory_growth?.verdict === 'plateau',
  );
  return {
    name: opts.name,
    tunebench_seconds: round(written),
    command_seconds: round(seconds),
    lightning_seconds: h200Replay().lightningSeconds,
    max_written: result.max,
    boundary: result.smallestFail,
    multiple: 8,
    confirmed_fresh: result.confirmed && fresh,
    run_seconds: round(run.wall_seconds),
    trials: trials.filter((t) => t.role.kind !== 'bracket').length,
    attempts: trials.reduce((a, t) => a + (t.attempts?.length ?? 0), 0),
    expected_max: opts.expected,
  };
}

const round = (x: number) => Math.round(x * 10) / 10;

function table(rows: Row[], scale: number, baseline: string | undefined): string {
  const lines = [
    '| row | build | time to a written max | / Lightning 39.4 s | whole command | max written (true max) | boundary | confirmed fresh | fresh trials | in-process attempts |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const [row, build] = r.name.split(' @ ');
    lines.push(
      `| ${row} | ${build} | ${r.tunebench_seconds} s | ${(r.tunebench_seconds / r.lightning_seconds).toFixed(2)}x | ${r.command_seconds} s | ` +
        `${r.max_written ?? 'none'} (${r.expected_max}) | ${r.boundary ?? '-'} | ${r.confirmed_fresh ? 'yes' : 'no'} | ${r.trials} | ${r.attempts} |`,
    );
  }
  return [
    '## GPU replay: time to a written max on the recorded H200',
    '',
    `Command: \`npm run bench:gpu-replay${scale !== 1 || baseline ? ' --' : ''}${scale !== 1 ? ` --scale ${scale}` : ''}${baseline ? ' --baseline <older build>/dist/harness/cli/main.js' : ''}\` (${new Date().toISOString().slice(0, 10)}). ` +
      "test/bench/programs/cuda_replay.py replays test/fixtures/gpu-records/h200-2026-11-28: each batch's device memory and step times " +
      "as recorded, the card's limit between the recorded max (3368) and its failure (3376), the warm server's recorded 5.3 s of imports, and " +
      'the recorded 7.1 s that every probe spent outside its steps, paid once per process (Lightning ran 19 attempts in one process in 39.4 s, ' +
      "so it is not paid per attempt). The stage is the kit's (multiple 8, start 64, steps 2, confirm_steps 1, repeat_boundary 0, choose max), " +
      "run by `tunebench run` as a user would. The time to a written max runs from the command's launch (Node start included) to chosen-config.json; the whole command also draws the reports.",
    '',
    ...lines,
  ].join('\n');
}

function main(): void {
  const scale = Number(arg('--scale') ?? 1);
  const baseline = arg('--baseline');
  const r = h200Replay();
  const b = bent(r);
  const builds: [string, string][] = [
    ['this build', CLI],
    ...(baseline ? ([['baseline', baseline]] as [string, string][]) : []),
  ];
  const rows: Row[] = [];
  for (const [build, cli] of builds) {
    rows.push(runRow({ name: `H200 @ ${build}`, spec: r.spec, expected: r.max, cli, scale }));
    rows.push(runRow({ name: `bends 18% @ ${build}`, spec: b.spec, expected: Math.floor(b.max / 8) * 8, cli, scale }));
  }
  const text = table(rows, scale, baseline);
  console.log(text);
  if (!process.argv.includes('--no-write') && scale === 1) writeSection('gpu-replay', text);
  if (process.argv.includes('--json'))
    console.log(
      JSON.stringify({
        rows: rows.map(
          ({ name, tunebench_seconds, lightning_seconds, max_written, boundary, multiple, confirmed_fresh }) => ({
            name,
            tunebench_seconds,
            lightning_seconds,
            max_written,
            boundary,
            multiple,
            confirmed_fresh,
          }),
        ),
      }),
    );
}

main();
