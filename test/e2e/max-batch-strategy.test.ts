// A max-batch stage may place its boundary with a reference finder (strategy: power-bisect, Lightning's
// BatchSizeFinder in mode binsearch; shrink-on-oom, Accelerate's find_executable_batch_size) instead of
// tunebench's own search: the same stage, trials, confirmation and report, so they are compared on one
// workload like for like.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, tempDir } from '../support/paths.js';
import { simulatedGpuHead } from '../support/simulated-gpu.js';
import { readRunDir } from '../../harness/experiment/run-file.js';

function experiment(strategy: string, start: number): string {
  return `${simulatedGpuHead(`strategy-${strategy}`, ['--hold-ms=15'])}  - kind: max-batch
    strategy: ${strategy}
    start: ${start}
    multiple_of: 8
    ceiling: 4096
    steps: 2
    confirm_steps: 3
    throughput_points: 0
    repeat_boundary: 0
    place_by: count
    choose: max
`;
}

async function run(strategy: string, start = 64) {
  const dir = tempDir('tunebench-strategy-');
  const file = join(dir, 'e.yaml');
  writeFileSync(file, experiment(strategy, start));
  const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs'), '--quiet'], { reject: false });
  assert.equal(r.exitCode, 0, r.stderr);
  const runDir = /run directory: (\S+)/.exec(r.stdout)![1]!;
  const { run: runJson, records } = readRunDir(runDir);
  const stage = runJson.result!.stages[0]!;
  assert.equal(stage.kind, 'max-batch');
  return { runDir, records, result: stage.kind === 'max-batch' ? stage.result : undefined };
}

/** tunebench's own search on the same workload, run once for every strategy it is compared with. */
let ownRun: ReturnType<typeof run> | undefined;
const ownSearch = () => (ownRun ??= run('tunebench'));

describe('max-batch strategy', () => {
  it('power-bisect doubles from start, bisects, and its answer is confirmed and reported like the search', async () => {
    const pb = await run('power-bisect');
    const own = await ownSearch();
    const probes = pb.records.filter((t) => t.role.kind === 'probe').map((t) => t.config['batch_size']);
    // Doubling from start until the first failure, then bisection to adjacent multiples.
    assert.deepEqual(probes.slice(0, 4), [64, 128, 256, 512]);
    assert.equal(pb.result!.status, 'exact');
    assert.equal(pb.result!.max, own.result!.max);
    assert.equal(pb.result!.smallestFail, pb.result!.max! + 8);
    // Its answer ran until memory flattened, as tunebench's own answer does.
    assert.equal(pb.result!.confirmed, true);
    assert.ok(pb.records.some((t) => t.role.kind === 'confirm' && t.config['batch_size'] === pb.result!.max));
    // Who ended each trial, as one fact: a probe that passed ended at `done` (by tunebench, or by its own exit 0
    // first), an OOM by the workload's own exit, the confirmation by tunebench once memory flattened.
    const endings = pb.records.map((t) => [t.role, t.outcome, t.ended_by] as const);
    for (const [, outcome, e] of endings.filter(([role]) => role.kind === 'probe'))
      assert.ok(
        outcome === 'ok' ? e.by === 'done' || (e.by === 'exit' && e.code === 0) : e.by === 'exit' && e.code !== 0,
        JSON.stringify(endings),
      );
    assert.ok(
      endings.some(([role, outcome, e]) => role.kind === 'confirm' && outcome === 'ok' && e.by === 'plateau'),
      JSON.stringify(endings),
    );
    assert.equal(pb.result!.strategy, 'power-bisect');
    assert.equal(own.result!.strategy, undefined);
    assert.match(
      readFileSync(join(pb.runDir, 'summary.md'), 'utf8'),
      new RegExp(
        `Trials to the exact max: ${pb.result!.probesToMax} \\(strategy power-bisect: Lightning's BatchSizeFinder`,
      ),
    );
  });

  it('shrink-on-oom shrinks x0.9 from start until a batch runs, then is bisected to the same exact max', async () => {
    const sh = await run('shrink-on-oom', 4096);
    const own = await ownSearch();
    const probes = sh.records.filter((t) => t.role.kind === 'probe').map((t) => Number(t.config['batch_size']));
    const oks = sh.records.filter((t) => t.role.kind === 'probe').map((t) => t.outcome === 'ok');
    // Accelerate's phase: each OOM shrinks the batch to 0.9x (on multiples of 8) until the first that runs.
    const first = oks.indexOf(true);
    assert.ok(first > 0, JSON.stringify(probes));
    assert.deepEqual(
      probes.slice(0, first + 1),
      probes.slice(0, first + 1).map((_, i) => (i === 0 ? 4096 : Math.floor((probes[i - 1]! * 0.9) / 8) * 8)),
    );
    // Then the bracket between that pass and the OOM before it is bisected: the max is exact, and tunebench's.
    assert.equal(sh.result!.status, 'exact');
    assert.equal(sh.result!.max, own.result!.max);
    assert.equal(sh.result!.smallestFail, sh.result!.max! + 8);
    assert.ok(sh.result!.max! >= probes[first]! && sh.result!.max! < probes[first - 1]!);
    assert.equal(sh.result!.confirmed, true);
    assert.equal(sh.result!.strategy, 'shrink-on-oom');
    assert.match(
      readFileSync(join(sh.runDir, 'summary.md'), 'utf8'),
      /\(strategy shrink-on-oom: Accelerate's find\\?_executable\\?_batch\\?_size, x0\.9 from the start after each OOM/,
    );
  });
});
