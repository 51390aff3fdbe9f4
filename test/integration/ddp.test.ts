// DDP trials (workload.launcher: torchrun): the harness's multi-rank rules on a fake pair of ranks,
// then 2 real gloo ranks of Debian's torch under torch.distributed.run: max-batch to an exact max
// probed again directly, a sweep, an OOM on one rank, summed throughput and the largest rank's memory.
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ConfigError } from '../../harness/errors.js';
import { runProcessTrial } from '../../harness/trial/process.js';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { createWorkload } from '../../harness/workloads/index.js';
import { CommandWorkload, type CommandSpec } from '../../harness/workloads/command/workload.js';
import { CLI, FIXTURES, PROGRAMS, tempDir } from '../support/paths.js';
import { assertExactMax, journal, runDir } from '../support/runs.js';
import { PYTHON, requireSystem } from '../support/system.js';
import { waitFor } from '../support/wait.js';
import type { MaxBatchSummary, SweepSummary } from '../../harness/domain/index.js';
import { loadExperiment } from '../../harness/engine/load.js';

const EXPERIMENT = join(FIXTURES, 'experiments', 'torch-ddp-small.yaml');

/** State and process group of a process (from /proc/<pid>/stat), or undefined when it is gone. */
function stat(pid: number): { state: string; pgid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, pgid: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/** Running: a zombie has exited (it holds no memory and runs nothing) and waits only to be reaped. */
function alive(pid: number): boolean {
  const s = stat(pid);
  return s !== undefined && s.state !== 'Z';
}

/** True when none of `pids` runs, else undefined (for waitFor). */
const gone = (pids: number[]) => (pids.some(alive) ? undefined : true);

/** Live processes in process group `pgid`. */
function inGroup(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => stat(pid)?.pgid === pgid && alive(pid));
}

/** Processes that carry TUNEBENCH_RANKS: a rank or a launcher of a multi-rank trial. */
function rankProcesses(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid && alive(Number(e)))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/environ`).includes('TUNEBENCH_RANKS=');
      } catch {
        return false;
      }
    })
    .map(Number);
}

const torchrunLogDirs = () => new Set(readdirSync(tmpdir()).filter((n) => n.startsWith('tunebench-torchrun-')));

describe('multi-rank trials (two fake ranks, no torch)', () => {
  const fake = (env: Record<string, string>, ranks: number) =>
    runProcessTrial({
      argv: [process.execPath, join(PROGRAMS, 'fake-ranks.mjs')],
      env,
      timeoutSeconds: 30,
      mechanism: 'none',
      eventsRequired: true,
      scratchDir: tempDir(),
      trialId: 't0000',
      stopAtDone: true,
      ranks,
    });

  it('stops at done only once every rank has sent it', async () => {
    const r = await fake({ FIXTURE_MODE: 'done-apart', FIXTURE_GAP_MS: '1500' }, 2);
    assert.equal(r.outcome, 'ok', r.reason);
    assert.match(r.reason, /stopped at its done event from each of its 2 ranks/);
    assert.equal(r.events.filter((e) => e.event === 'done').length, 2, "rank 1's done was waited for");
    assert.ok(r.wallSeconds >= 1.5 && r.wallSeconds < 10, String(r.wallSeconds));
    // One process: its first done ends it.
    const one = await fake({ FIXTURE_MODE: 'done-apart', FIXTURE_GAP_MS: '1500' }, 1);
    assert.equal(one.outcome, 'ok');
    assert.ok(one.wallSeconds < 1.5, String(one.wallSeconds));
  });

  it('stops every rank at the oom event of one, long before its timeout, and leaves no process', async () => {
    const pidFile = join(tempDir(), 'pids.json');
    const r = await fake({ FIXTURE_MODE: 'oom-one', FIXTURE_PID_FILE: pidFile }, 2);
    assert.equal(r.outcome, 'oom');
    assert.match(r.reason, /^oom event from the workload \(rank 1\)/);
    assert.match(r.reason, /every rank was stopped at the oom event of rank 1/);
    assert.ok(r.wallSeconds < 5, `ended in ${r.wallSeconds} s of a 30 s timeout`);
    const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as { launcher: number; rank0: number };
    // SIGKILL is delivered at once, the exit a moment later.
    await waitFor(
      'the launcher and rank 0 (which ignores SIGTERM) to exit',
      () => gone([pids.launcher, pids.rank0]),
      2,
    );
  });
});

describe('workload.launcher that cannot start the ranks', () => {
  const trial = (spec: Partial<CommandSpec>, memory?: number) =>
    runTrial(
      {
        workload: new CommandWorkload(
          { kind: 'command', command: ['train.py'], protocol: 'required', ...spec },
          PROGRAMS,
        ),
        limits: { mechanism: 'auto', timeout: 30, ...(memory ? { memory } : {}) },
        scratchDir: tempDir(),
      },
      {
        index: 0,
        stage: 's',
        role: { kind: 'probe' },
        config: { batch_size: 8 },
        measure: { warmupSteps: 0, steps: 1 },
      },
    );

  it(
    'stops the run, naming the field and the fix, when the interpreter has no torch',
    {
      skip: requireSystem('python3'),
    },
    async () => {
      // Python without its site packages: no torch, as in a virtual environment without it.
      const bare = join(tempDir(), 'python-without-torch');
      writeFileSync(bare, `#!/bin/sh\nexec ${PYTHON} -S "$@"\n`);
      chmodSync(bare, 0o755);
      await assert.rejects(trial({ launcher: { kind: 'torchrun', nproc_per_node: 2, python: bare } }), (error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^workload\.launcher: .*could not start the ranks/);
        assert.match(error.message, /Error while finding module specification for 'torch\.distributed\.run'/);
        assert.match(error.message, /chosen by workload\.launcher\.python: set workload\.launcher\.python/);
        return true;
      });
    },
  );

  it('stops the run when the interpreter does not exist, with or without a memory cap', async () => {
    for (const memory of [undefined, 2 ** 31]) {
      await assert.rejects(
        trial({ python: '/nonexistent/python3', launcher: { kind: 'torchrun', nproc_per_node: 2 } }, memory),
        (error) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.match(error.message, /"\/nonexistent\/python3 -m torch\.distributed\.run" could not start the ranks/);
          assert.match(error.message, /chosen by workload\.python/);
          return true;
        },
      );
    }
  });
});

describe('DDP trials: 2 gloo ranks under torchrun', { skip: requireSystem('torch') }, () => {
  it(
    'finds the exact max batch and sweeps 2 configs; the max and the next multiple, probed again, hold and fail',
    {
      timeout: 180_000,
    },
    async () => {
      const logDirs = torchrunLogDirs();
      const out = tempDir();
      const r = await execa(process.execPath, [CLI, 'run', EXPERIMENT, '--out', out], { reject: false });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.deepEqual(rankProcesses(), [], 'no launcher or rank outlives the run');
      assert.deepEqual(
        [...torchrunLogDirs()].filter((d) => !logDirs.has(d)),
        [],
        "torchrun's log directories removed",
      );
      const dir = runDir(out, 'torch-ddp-small');
      const records = journal(dir);
      assert.ok(records.every((t) => t.ranks === 2));
      const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
        result: { stages: { result: unknown }[]; chosen: Record<string, unknown> };
      };
      const [mb, sweep] = run.result.stages.map((s) => s.result) as [MaxBatchSummary, SweepSummary];
      assert.equal(mb.status, 'exact');
      const max = mb.max!;
      const { experiment, source } = loadExperiment(EXPERIMENT);
      const stage = experiment.stages[0]!;
      assert.ok(stage.kind === 'max-batch');
      const step = stage.multiple_of;
      assertExactMax(records, max, step);
      for (const o of records.filter((t) => t.outcome === 'oom')) {
        assert.match(o.reason, /^oom event from the workload \(rank [01]\)/);
        assert.match(o.stderr_tail, /DefaultCPUAllocator: can't allocate memory/);
      }

      // The sweep: both configs, at the chosen batch, on 2 ranks.
      const swept = records.filter((t) => t.stage === 'workers');
      assert.deepEqual(
        swept.map((t) => [t.outcome, t.config['num_workers'], t.config['batch_size']]),
        [
          ['ok', 0, max],
          ['ok', 1, max],
        ],
      );
      assert.equal(sweep.configs.length, 2);
      assert.equal(run.result.chosen['batch_size'], max);
      assert.match(
        readFileSync(join(dir, 'summary.md'), 'utf8'),
        /Each trial ran 2 ranks \(workload\.launcher\): a batch fits when every rank survives, samples\/s is summed over the ranks/,
      );

      // The boundary, probed directly as the search probes: warm-up plus 1 step under the same cap.
      const ctx: TrialContext = {
        workload: createWorkload(experiment.workload, experiment.seed, source),
        limits: experiment.limits,
        scratchDir: tempDir(),
      };
      const probe = (batch: number, index: number) =>
        runTrial(ctx, {
          index,
          stage: 'boundary',
          role: { kind: 'probe' },
          config: { batch_size: batch },
          measure: { warmupSteps: experiment.measure.warmup_steps, steps: 1 },
        });
      const fits = await probe(max, 0);
      assert.equal(fits.outcome, 'ok', fits.reason + fits.stderr_tail);
      assert.equal(fits.ranks, 2);
      assert.equal(fits.rank_peak_bytes?.filter((b) => b !== null).length, 2, 'both ranks ran to their memory report');
      assert.deepEqual(
        fits.steps.map((s) => s.samples),
        [2 * max],
      );
      assert.equal(fits.limit.mechanism, 'prlimit-as');
      assert.ok(fits.peak_limited_bytes! <= experiment.limits.memory!, 'the largest rank stayed under its cap');
      const over = await probe(max + step, 1);
      assert.equal(over.outcome, 'oom', over.reason);
      assert.match(over.reason, /^oom event from the workload \(rank [01]\)/);
    },
  );

  it(
    'an OOM on rank 1 alone is an OOM for the trial: every rank is stopped, no process left, within the timeout',
    {
      timeout: 60_000,
    },
    async () => {
      const pidDir = tempDir();
      const started = Date.now();
      const r = await runTrial(ddpContext({ DDP_PID_DIR: pidDir, DDP_OOM_RANK: '1' }), request(16));
      assert.equal(r.outcome, 'oom', r.reason + r.stderr_tail);
      assert.match(r.reason, /^oom event from the workload \(rank 1\)/);
      assert.match(r.reason, /every rank was stopped at the oom event of rank 1/);
      // Rank 0 ignores torchrun's SIGTERM, which would kill it only after 30 s: the harness did, at once.
      assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
      const ranks = [0, 1].map(
        (rank) => JSON.parse(readFileSync(join(pidDir, `rank${rank}.json`), 'utf8')) as Record<string, number>,
      );
      assert.equal(ranks[0]!['ppid'], ranks[1]!['ppid'], 'both ranks are children of the launcher');
      assert.equal(ranks[0]!['pgid'], ranks[1]!['pgid'], "both ranks are in the trial's process group");
      await waitFor(
        'both ranks and the launcher to exit',
        () => gone([...ranks.map((x) => x['pid']!), ranks[0]!['ppid']!]),
        2,
      );
      assert.deepEqual(inGroup(ranks[0]!['pgid']!), [], "nothing is left in the trial's process group");
    },
  );

  it(
    "a rank killed by SIGKILL from outside (the OOM killer's signal) is an OOM, read from the launcher's report",
    { timeout: 60_000 },
    async () => {
      const r = await runTrial(ddpContext({ DDP_SIGKILL_RANK: '1' }), request(16));
      assert.equal(r.outcome, 'oom', r.reason + r.stderr_tail);
      assert.match(r.reason, /^exit code 1 and an out-of-memory message \(torchrun: /);
      assert.match(r.stderr_tail, /exitcode\s*: -9/);
    },
  );

  it(
    "sums the samples of the ranks, keeps rank 0's steps, and takes the largest rank's memory",
    {
      timeout: 60_000,
    },
    async () => {
      const extraMiB = 256;
      const r = await runTrial(ddpContext({ DDP_EXTRA_RANK: '1', DDP_EXTRA_MIB: String(extraMiB) }), request(16));
      assert.equal(r.outcome, 'ok', r.reason + r.stderr_tail);
      assert.equal(r.ranks, 2);
      assert.equal(r.steps.length, 3, "rank 0's timed steps, not both ranks'");
      assert.equal(r.warmup_steps, 1);
      assert.ok(r.steps.every((s) => s.samples === 2 * 16));
      const seconds = r.steps.reduce((a, s) => a + s.seconds, 0);
      assert.ok(Math.abs(r.samples_per_second! - (3 * 32) / seconds) < 1e-6 * r.samples_per_second!);
      // Rank 1 holds 256 MiB more: its figures are the trial's.
      assert.equal(r.peak_rank, 1);
      const [rank0, rank1] = r.rank_peak_bytes as [number, number];
      assert.ok(rank1 - rank0 > 0.8 * extraMiB * 2 ** 20, `${rank0} ${rank1}`);
      assert.equal(r.peak_rss_bytes, rank1);
      assert.equal(r.workload_report?.['rank'], 1);
      assert.equal(r.workload_report?.['held_bytes'], extraMiB * 2 ** 20);
      // The tree (the launcher and both ranks) held more: it stays in telemetry, not as the trial's memory.
      assert.ok(r.telemetry.summary.rss_bytes!.max > rank1 + rank0 / 2, JSON.stringify(r.telemetry.summary.rss_bytes));
    },
  );
});

function ddpContext(env: Record<string, string>): TrialContext {
  return {
    workload: new CommandWorkload(
      {
        kind: 'command',
        command: ['ddp_ranks.py'],
        python: PYTHON,
        protocol: 'required',
        env,
        launcher: { kind: 'torchrun', nproc_per_node: 2 },
      },
      PROGRAMS,
    ),
    limits: { mechanism: 'auto', timeout: 60 },
    scratchDir: tempDir(),
  };
}

const request = (batch: number) => ({
  index: 0,
  stage: 's',
  role: { kind: 'probe' as const },
  config: { batch_size: batch },
  measure: { warmupSteps: 1, steps: 3 },
});
