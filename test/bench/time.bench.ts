// Benchmark: `tunebench time` against hyperfine on the same commands, in one run (issue 35).
//
//   npm run bench:time [-- --old <dist/harness/cli/main.js of an older build> [--old-name <what it is>]] [--reps N] [--quick]
//
// Measures, side by side and interleaved: the median of `sleep 0.1` (tunebench and hyperfine), the wall
// time per timed run of `true` and the fixed cost per invocation, and the verdicts on a CPU loop: A/A,
// +5% and +10% planted. With --old, an older build runs the same measurements in the same blocks, so
// "at least as often as before" is a ratio measured side by side, not a number from another day.
// Without hyperfine on PATH its columns say so and its targets are skipped.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { median } from 'simple-statistics';
import { CLI, tempDir } from '../support/paths.js';
import { writeSection } from './results.js';

interface Options {
  old: string | undefined;
  /** What the older build is, for the record (e.g. "main at b1411b0"). */
  oldName: string | undefined;
  reps: number;
  quick: boolean;
}

function options(argv: readonly string[]): Options {
  const o: Options = { old: undefined, oldName: undefined, reps: 4, quick: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--old') o.old = argv[++i];
    else if (a === '--old-name') o.oldName = argv[++i];
    else if (a === '--reps') o.reps = Number(argv[++i]);
    else if (a === '--quick') o.quick = true;
    else
      throw new Error(
        `unknown argument ${a}; usage: time.bench.js [--old <main.js> [--old-name <what it is>]] [--reps N] [--quick]`,
      );
  }
  return o;
}

const hyperfine = spawnSync('hyperfine', ['--version'], { encoding: 'utf8' });
const HYPERFINE = hyperfine.status === 0 ? hyperfine.stdout.trim() : null;
const out = tempDir();

/** Runs a command to its end; returns its wall seconds (start-up included) and stdout. */
function timed(argv: readonly string[]): { seconds: number; stdout: string } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0 && r.status !== 1)
    throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return { seconds, stdout: r.stdout };
}

interface TimeJson {
  commands: { label: string; verdict: string; wall: { median: number } | null }[];
}

/** The Node.js flags of a build's launcher, from its `#!/usr/bin/env -S node <flags>` line: what `tunebench` runs. */
function launcherFlags(cli: string): string[] {
  const first = readFileSync(cli, 'utf8').split('\n', 1)[0]!;
  const m = /^#!\/usr\/bin\/env -S node (.*)$/.exec(first);
  return m ? m[1]!.trim().split(/\s+/) : [];
}

/** `tunebench time` of one build, started as its launcher starts it; the wall of the invocation and its --json summary. */
function tunebench(cli: string, args: readonly string[]): { seconds: number; summary: TimeJson } {
  const r = timed([process.execPath, ...launcherFlags(cli), cli, 'time', '--out', out, '--json', ...args]);
  return { seconds: r.seconds, summary: JSON.parse(r.stdout) as TimeJson };
}

/** hyperfine's median of a command over `runs` runs (no shell), from its JSON export. */
function hyperfineMedian(command: string, runs: number): number {
  const file = join(out, 'hyperfine.json');
  timed(['hyperfine', '-N', '--runs', String(runs), '--export-json', file, '--style', 'none', command]);
  const j = JSON.parse(readFileSync(file, 'utf8')) as { results: { median: number }[] };
  return j.results[0]!.median;
}

const ms = (s: number) => `${(s * 1000).toFixed(1)} ms`;
const builds = (o: Options) => [['this build', CLI] as const, ...(o.old ? [['older build', o.old] as const] : [])];

/** Median of `sleep 0.1` in blocks: hyperfine, then each build, 10 runs each. */
function sleepMedians(o: Options): { rows: string[]; ours: number; theirs: number | null } {
  const blocks = o.quick ? 2 : 4;
  const got = new Map<string, number[]>();
  const push = (k: string, v: number) => got.set(k, [...(got.get(k) ?? []), v]);
  for (let b = 0; b < blocks; b++) {
    if (HYPERFINE) push('hyperfine', hyperfineMedian('sleep 0.1', 10));
    for (const [name, cli] of builds(o))
      push(name, tunebench(cli, ['--runs', '10', 'sleep 0.1']).summary.commands[0]!.wall!.median);
  }
  const rows = [...got].map(([k, v]) => `| ${k} | ${v.map(ms).join(', ')} | ${ms(median(v))} |`);
  return { rows, ours: median(got.get('this build')!), theirs: HYPERFINE ? median(got.get('hyperfine')!) : null };
}

/** Per timed run of `true` and the fixed cost of an invocation, from invocations of 1 and 1 + N runs. */
function costs(o: Options): { rows: string[]; perRun: number; fixed: number; fixedCompare: number } {
  const n = o.quick ? 100 : 300;
  const rows: string[] = [];
  let perRun = NaN;
  let fixed = NaN;
  let fixedCompare = NaN;
  for (const [name, cli] of builds(o)) {
    const one = median([1, 2, 3].map(() => tunebench(cli, ['--runs', '1', 'true']).seconds));
    const many = tunebench(cli, ['--runs', String(n + 1), 'true']).seconds;
    const per = (many - one) / n;
    // A compare of two commands: 3 rounds, 6 runs, its statistics and report.
    const compare = median([1, 2, 3].map(() => tunebench(cli, ['--runs', '3', 'true', 'true']).seconds));
    rows.push(`| ${name} | ${ms(per)} | ${(one - per).toFixed(2)} s | ${(compare - 6 * per).toFixed(2)} s |`);
    if (name === 'this build') [perRun, fixed, fixedCompare] = [per, one - per, compare - 6 * per];
  }
  if (HYPERFINE) {
    const one = timed(['hyperfine', '-N', '--runs', '2', '--style', 'none', 'true']).seconds;
    const many = timed(['hyperfine', '-N', '--runs', String(n + 2), '--style', 'none', 'true']).seconds;
    const per = (many - one) / n;
    rows.push(`| hyperfine | ${ms(per)} | ${(one - 2 * per).toFixed(2)} s | - |`);
  }
  return { rows, perRun, fixed, fixedCompare };
}

/** mawk iterations of about 0.3 s on this machine, measured now. */
function loopSize(): number {
  const probe = 2_000_000;
  const t = median([1, 2, 3].map(() => timed(['awk', `BEGIN{for(i=0;i<${probe};i++)s+=i}`]).seconds));
  return Math.round((probe * 0.3) / t);
}

const CASES = [
  { name: 'A/A', factor: 1, right: ['no significant difference'] },
  { name: '+5%', factor: 1.05, right: ['slower'] },
  { name: '+10%', factor: 1.1, right: ['slower'] },
] as const;

/** Verdicts on a CPU loop against itself and against planted slowdowns, each build in turn. */
function verdicts(o: Options): { rows: string[]; ok: boolean } {
  const n = loopSize();
  const loop = (k: number) => `awk 'BEGIN{for(i=0;i<${Math.round(n * k)};i++)s+=i}'`;
  const tally = new Map<string, { right: number; wrong: number; undecided: number; seconds: number[] }>();
  for (let rep = 0; rep < o.reps; rep++) {
    for (const c of CASES) {
      for (const [name, cli] of builds(o)) {
        const r = tunebench(cli, [loop(1), loop(c.factor)]);
        const v = r.summary.commands[1]!.verdict;
        const key = `${name}|${c.name}`;
        const t = tally.get(key) ?? { right: 0, wrong: 0, undecided: 0, seconds: [] };
        if (v === 'undecided') t.undecided++;
        else if ((c.right as readonly string[]).includes(v)) t.right++;
        else t.wrong++;
        t.seconds.push(r.seconds);
        tally.set(key, t);
        process.stderr.write(`bench:time ${name} ${c.name} rep ${rep + 1}: ${v} (${r.seconds.toFixed(1)} s)\n`);
      }
    }
  }
  const rows = [...tally].map(([key, t]) => {
    const [name, kase] = key.split('|');
    return `| ${kase} | ${name} | ${t.right} | ${t.wrong} | ${t.undecided} | ${median(t.seconds).toFixed(1)} s |`;
  });
  const ours = [...tally].filter(([k]) => k.startsWith('this build|'));
  const older = [...tally].filter(([k]) => k.startsWith('older build|'));
  const decided = (xs: typeof ours) => xs.reduce((a, [, t]) => a + t.right, 0);
  const noneWrong = ours.every(([, t]) => t.wrong === 0);
  return { rows, ok: noneWrong && (older.length === 0 || decided(ours) >= decided(older)) };
}

function main(): void {
  const o = options(process.argv.slice(2));
  const started = Date.now();
  const sleep = sleepMedians(o);
  const cost = costs(o);
  const verdict = verdicts(o);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const diff = sleep.theirs === null ? null : Math.abs(sleep.ours - sleep.theirs);
  const target = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const md = [
    '## `tunebench time` against hyperfine',
    '',
    `Command: \`npm run bench:time${o.old ? ' -- --old <main.js of the older build>' : ''}\`${o.oldName ? ` (older build: ${o.oldName})` : ''} (one run, ${new Date().toISOString().slice(0, 10)}, ${minutes} minutes; ${HYPERFINE ?? 'hyperfine not installed: its columns are skipped'}). Every figure of a table comes from blocks run in turn in this one run.`,
    '',
    '### Median of `sleep 0.1` (10 runs per block)',
    '',
    '| tool | block medians | median |',
    '| --- | --- | --- |',
    ...sleep.rows,
    '',
    diff === null
      ? 'hyperfine is not installed: the 2 ms target is not checked.'
      : `Difference to hyperfine: ${ms(diff)} (target <= 2 ms: ${target(diff <= 0.002)}).`,
    '',
    '### Cost per run and per invocation',
    '',
    'Per timed run of `true`: (wall of an invocation with 1 + N runs - wall with 1 run) / N. Fixed cost: the wall of a one-run invocation less one run; of a compare of two commands (3 rounds), less its 6 runs.',
    '',
    '| tool | per timed run of `true` | fixed cost, one command | fixed cost, compare |',
    '| --- | --- | --- | --- |',
    ...cost.rows,
    '',
    `Targets: per run <= 5 ms: ${target(cost.perRun <= 0.005)}; fixed cost <= 0.5 s: ${target(cost.fixed <= 0.5)} (one command), ${target(cost.fixedCompare <= 0.5)} (compare).`,
    '',
    `### Verdicts on a CPU loop of about 0.3 s (${o.reps} runs of \`tunebench time A B\` per case and build, adaptive rounds)`,
    '',
    '| case | build | right | wrong | undecided | median wall per invocation |',
    '| --- | --- | --- | --- | --- | --- |',
    ...verdict.rows,
    '',
    `Right: "no significant difference" for A/A, "slower" for a planted slowdown. Target (no wrong verdict${o.old ? ', and at least as many right verdicts as the older build' : ''}): ${target(verdict.ok)}.`,
  ].join('\n');
  writeSection('time', md);
  process.stdout.write(`${md}\n`);
  rmSync(out, { recursive: true, force: true });
}

main();
