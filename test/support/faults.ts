// The kill -9 loop of the fault-injection suite, shared by test/faults/ and test/bench/faults.bench.ts:
// run a deterministic experiment, kill the harness at random points, resume, and count what a kill
// cost: trials lost (completed before a kill, missing after) and trials duplicated.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { createRng } from '../../harness/stats/rng.js';
import { CLI, FIXTURES, PROGRAMS, tempDir } from './paths.js';
import { waitFor } from './wait.js';
import { journal } from './runs.js';
import type { TrialRecord } from '../../harness/domain/index.js';

/** The deterministic experiment (simulated GPU, max batch + sweep + compare, about 40 trials). */
export const FAULTS_EXPERIMENT = join(FIXTURES, 'experiments', 'faults.yaml');

export interface Trace {
  records: TrialRecord[];
  chosen: Record<string, unknown>;
}

export interface KillLoopResult {
  kills: number;
  runs: number;
  /** Trials a kill left in the journal that were gone, or changed, after the resume. */
  lost: number;
  /** Trials that occur twice in a finished journal (the same index, or more trials than the reference). */
  duplicates: number;
  /** Finished runs whose trial sequence or chosen config differ from the uninterrupted run. */
  mismatches: string[];
  /** Resumes of the finished runs, and how many of them found a dead process's lock and took it over. */
  resumes: number;
  staleLocksTakenOver: number;
  /** Completed trials in the journal at each kill. */
  trialsAtKill: number[];
  /** Kills that landed before the run had a run.json (nothing to resume; a new run starts). */
  beforeRunJson: number;
}

export function readTrace(dir: string): Trace {
  const records = journal(dir);
  const chosen = (
    JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as { config: Record<string, unknown> }
  ).config;
  return { records, chosen };
}

/** What identifies a trial across runs: its stage, role and config (timings differ). */
export function trialKey(r: TrialRecord): string {
  return JSON.stringify([r.index, r.stage, r.role, Object.entries(r.config).sort(([a], [b]) => a.localeCompare(b))]);
}

function journalLines(dir: string): string[] {
  const path = join(dir, 'trials.jsonl');
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  // Only whole lines count as completed trials: a line cut short by the kill was not completed
  // (the last piece of the split is "" after a whole line, or the cut-short line).
  return text.split('\n').slice(0, -1);
}

function runDirs(out: string): string[] {
  const root = join(out, 'faults');
  return existsSync(root) ? readdirSync(root).map((d) => join(root, d)) : [];
}

/**
 * Kills the harness with SIGKILL at random points (between minDelay and maxDelay seconds after it
 * started) until `kills` kills have landed, resuming after each; a run that finishes starts the next.
 * A kill that lands where the one before it did (the resume wrote no trial: on a slow machine start-up
 * and replay can take most of maxDelay) widens the next delay by maxDelay - minDelay per such kill in
 * a row, so that the kills still move through the whole run instead of piling up at one trial.
 */
export async function killLoop(opts: {
  out: string;
  reference: Trace;
  kills: number;
  seed: number;
  minDelay?: number;
  maxDelay?: number;
}): Promise<KillLoopResult> {
  const rng = createRng(opts.seed);
  const minDelay = opts.minDelay ?? 0.3;
  const maxDelay = opts.maxDelay ?? 1.6;
  const result: KillLoopResult = {
    kills: 0,
    runs: 0,
    lost: 0,
    duplicates: 0,
    mismatches: [],
    resumes: 0,
    staleLocksTakenOver: 0,
    trialsAtKill: [],
    beforeRunJson: 0,
  };
  let current: string | null = null;
  let stalled = 0;
  // The whole journal lines a run held at its last kill: every later look must still start with them.
  const kept = new Map<string, string[]>();
  const observe = (dir: string) => {
    const now = journalLines(dir);
    result.lost += (kept.get(dir) ?? []).filter((line, i) => now[i] !== line).length;
    kept.set(dir, now);
  };
  const check = (dir: string) => {
    const trace = readTrace(dir);
    const keys = trace.records.map(trialKey);
    result.duplicates +=
      keys.length -
      new Set(trace.records.map((r) => r.index)).size +
      Math.max(0, keys.length - opts.reference.records.length);
    const want = opts.reference.records.map(trialKey);
    if (JSON.stringify(keys) !== JSON.stringify(want))
      result.mismatches.push(`${dir}: trial sequence differs from the uninterrupted run`);
    if (JSON.stringify(trace.chosen) !== JSON.stringify(opts.reference.chosen))
      result.mismatches.push(
        `${dir}: chose ${JSON.stringify(trace.chosen)}, uninterrupted ${JSON.stringify(opts.reference.chosen)}`,
      );
    const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { resumes: { notes: string[] }[] };
    result.staleLocksTakenOver += run.resumes.filter((r) =>
      r.notes.some((n) => n.startsWith('took over the stale lock')),
    ).length;
    result.resumes += run.resumes.length;
    result.runs += 1;
  };
  while (result.kills < opts.kills) {
    const before = new Set(runDirs(opts.out));
    const args: string[] =
      current === null
        ? ['run', FAULTS_EXPERIMENT, '--out', opts.out, '--quiet']
        : ['run', '--resume', current, '--quiet'];
    const child: ResultPromise = execa(process.execPath, [CLI, ...args], { reject: false });
    const delay = minDelay + (rng() + stalled) * (maxDelay - minDelay);
    const timer = setTimeout(() => child.kill('SIGKILL'), delay * 1000);
    const r: { signal?: string | undefined; exitCode?: number | undefined; stderr: unknown } = await child;
    clearTimeout(timer);
    if (current === null) current = runDirs(opts.out).find((d) => !before.has(d)) ?? null;
    if (r.signal === 'SIGKILL') {
      result.kills += 1;
      if (current === null || !existsSync(join(current, 'run.json'))) {
        // Killed before the run directory or its run.json existed: no trial to lose; start afresh.
        result.beforeRunJson += 1;
        current = null;
        continue;
      }
      const held = kept.get(current)?.length;
      observe(current);
      const at = kept.get(current)!.length;
      stalled = at === held ? stalled + 1 : 0;
      result.trialsAtKill.push(at);
      if ((JSON.parse(readFileSync(join(current, 'run.json'), 'utf8')) as { status?: string }).status === 'finished') {
        // Killed after the run committed (run.json says finished) and before the process exited.
        check(current);
        current = null;
      }
      continue;
    }
    assert.equal(r.exitCode, 0, `run ${args.join(' ')} failed: ${String(r.stderr)}`);
    observe(current!);
    check(current!);
    current = null;
  }
  if (current !== null) {
    // Finish the last killed run without a kill.
    const r = await execa(process.execPath, [CLI, 'run', '--resume', current, '--quiet'], { reject: false });
    assert.equal(r.exitCode, 0, `final resume failed: ${String(r.stderr)}`);
    observe(current);
    check(current);
  }
  return result;
}

/**
 * Writes <dir>/<name>.yaml: an experiment whose workload runs `command` (program and arguments),
 * with more `workload:` lines (indented two spaces) and the lines after the workload; returns its path.
 */
export function commandExperiment(
  dir: string,
  name: string,
  command: readonly string[],
  workload: readonly string[],
  rest: readonly string[],
): string {
  const path = join(dir, `${name}.yaml`);
  const yaml = [
    `name: ${name}`,
    'workload:',
    '  kind: command',
    `  command: [${command.map((c) => JSON.stringify(c)).join(', ')}]`,
    ...workload,
    ...rest,
    '',
  ];
  writeFileSync(path, yaml.join('\n'));
  return path;
}

/**
 * Starts `tunebench run` on a sweep whose trial hangs (and ignores SIGTERM: test/fixtures/programs/hangs.mjs)
 * and waits until the trial runs; the pids are its process and grandchild.
 */
export async function startHangingRun(opts: { timeout?: number } = {}) {
  const dir = tempDir();
  const pidFile = join(dir, 'pids.json');
  const experiment = commandExperiment(
    dir,
    'hangs',
    [process.execPath, join(PROGRAMS, 'hangs.mjs')],
    [`  env: { FIXTURE_PID_FILE: ${JSON.stringify(pidFile)} }`, '  params: { batch_size: 8 }'],
    ['limits: { timeout: 120s }', 'stages:', '  - kind: sweep', '    params: { x: [1, 2] }'],
  );
  const out = join(dir, 'reports');
  const child = execa(process.execPath, [CLI, 'run', experiment, '--out', out], {
    reject: false,
    ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
  });
  const pids = await waitFor(
    'the trial under way',
    () =>
      existsSync(pidFile) ? (JSON.parse(readFileSync(pidFile, 'utf8')) as { child: number; grandchild: number }) : null,
    30,
  );
  return { child, out, pids };
}
