// A run never touches another run (issue 45, broken items 1 and 2): the start-of-run sweep of leftovers
// ends only what is provably its own directory's, left by a harness that is provably dead; a workload that
// deletes its run's lock cannot let a second run in; a helper that moves into a child cgroup of its own
// trial cgroup is ended with the trial, and the whole subtree is removed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import type { TrialRecord } from '../../harness/domain/index.js';
import { cgroupHost } from '../../harness/trial/cgroup-host.js';
import { ownerTag, pidNamespace, scopeOf } from '../../harness/trial/owner.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { commandExperiment } from '../support/faults.js';
import { CLI, tempDir } from '../support/paths.js';
import { runDir } from '../support/runs.js';
import { PYTHON, requireSystem } from '../support/system.js';
import { waitFor } from '../support/wait.js';
import { alive, OWN_CGROUP_DIR, PY_STEPS } from '../support/fault-workloads.js';
import { makeBisectRepo } from '../support/bisect-repo.js';

const journal = (dir: string): TrialRecord[] =>
  readFileSync(join(dir, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TrialRecord);

/** A one-config-per-value sweep of `program` (python), every trial 2 steps. */
function sweep(dir: string, name: string, program: string, values = '[1]'): string {
  return commandExperiment(
    dir,
    name,
    [PYTHON, program],
    ['  protocol: required'],
    [
      'limits: { timeout: 60s }',
      'measure: { warmup_steps: 0, steps: 2 }',
      'stages:',
      `  - { kind: sweep, params: { x: ${values} }, strategy: grid, repeats: 1 }`,
    ],
  );
}

describe('a run never touches another run', { skip: requireSystem('cgroup') }, () => {
  it('a run in another PID namespace keeps its live trial while an unrelated run starts beside it', async () => {
    const dir = tempDir();
    const ready = join(dir, 'ready');
    const program = join(dir, 'slow.py');
    writeFileSync(
      program,
      `${PY_STEPS}
import time
open(${JSON.stringify(ready)}, "w").close()
time.sleep(6)
steps()
`,
    );
    // Run A in a PID namespace of its own (a container or an Apptainer --pid job sharing the cgroupfs): its
    // pids mean other processes out here, so its trial cgroup's owner cannot be checked from outside.
    const a = execa(
      'unshare',
      [
        '--pid',
        '--fork',
        '--mount-proc',
        process.execPath,
        CLI,
        'run',
        sweep(dir, 'inside', program),
        '--out',
        join(dir, 'a'),
        '--json',
      ],
      { reject: false },
    );
    await waitFor('the trial of the run in its own PID namespace', () => existsSync(ready) || null, 30);
    const quick = join(dir, 'quick.py');
    writeFileSync(quick, `${PY_STEPS}\nsteps()\n`);
    const b = await execa(process.execPath, [CLI, 'run', sweep(dir, 'outside', quick), '--out', join(dir, 'b')], {
      reject: false,
    });
    assert.equal(b.exitCode, 0, b.stderr);
    assert.doesNotMatch(b.stderr, /ended \d+ process/, 'the unrelated run ended nothing');
    const ra = await a;
    assert.equal(ra.exitCode, 0, ra.stderr);
    const records = journal(runDir(join(dir, 'a'), 'inside'));
    assert.deepEqual(
      records.map((r) => [r.index, r.outcome]),
      [[0, 'ok']],
      'the live trial ran to its end, once',
    );
  });

  it("a workload that deletes its run's lock cannot let a second run of the directory in", async () => {
    const dir = tempDir();
    const ready = join(dir, 'ready');
    const program = join(dir, 'unlock.py');
    writeFileSync(
      program,
      `${PY_STEPS}
import json, os, time
run = os.path.dirname(os.path.dirname(os.environ["TUNEBENCH_EVENTS"]))
cfg = json.loads(os.environ["TUNEBENCH_CONFIG"])
if cfg["x"] == 1:
    os.remove(os.path.join(run, ".lock"))
    with open(${JSON.stringify(ready)}, "w") as f:
        f.write(run)
    time.sleep(5)
steps()
`,
    );
    const out = join(dir, 'runs');
    const first = execa(process.execPath, [CLI, 'run', sweep(dir, 'unlock', program, '[1, 2]'), '--out', out], {
      reject: false,
    });
    const run = await waitFor(
      'the trial that deletes the lock',
      () => (existsSync(ready) ? readFileSync(ready, 'utf8') : null),
      30,
    );
    const second = await execa(process.execPath, [CLI, 'run', '--resume', run], { reject: false });
    assert.equal(second.exitCode, 1, second.stderr);
    assert.match(second.stderr, /another tunebench \(pid \d+\) is still running trials of this run directory/);
    const r = await first;
    assert.equal(r.exitCode, 0, r.stderr);
    // The first run kept the directory: its lock was made again before its next trial, and its journal is whole.
    assert.deepEqual(
      journal(run).map((t) => [t.index, t.outcome]),
      [
        [0, 'ok'],
        [1, 'ok'],
      ],
    );
    assert.equal(existsSync(join(run, '.lock')), false, 'released at the end');
  });

  it("another directory's orphaned trial cgroups, their owner dead, are left alone and never called this directory's", async () => {
    const host = cgroupHost();
    const parent = host.memory ?? host.unified?.dir;
    assert.ok(parent, 'a cgroup to nest under');
    // A dead owner: this pid namespace, a pid that runs no process with that start time. One cgroup is named
    // as tunebench names them now (another directory's scope), one as an older tunebench did (no scope at all).
    const owner = { scope: scopeOf(tempDir()), pidns: pidNamespace(), pid: 4_000_000, start: 1 };
    const orphans = [`tunebench-${ownerTag(owner)}.t0000.deadbeef`, 'tunebench-4000000.1.t0000.deadbeef'].map((n) =>
      join(parent, n),
    );
    const sleepers = orphans.map(() => spawn('sleep', ['300'], { detached: true, stdio: 'ignore' }));
    try {
      orphans.forEach((o, i) => {
        mkdirSync(o);
        writeFileSync(join(o, 'cgroup.procs'), String(sleepers[i]!.pid));
      });
      const dir = tempDir();
      const quick = join(dir, 'quick.py');
      writeFileSync(quick, `${PY_STEPS}\nsteps()\n`);
      const r = await execa(process.execPath, [CLI, 'run', sweep(dir, 'other', quick), '--out', join(dir, 'runs')], {
        reject: false,
      });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /ended \d+ process/);
      for (const [i, o] of orphans.entries()) {
        assert.ok(alive(sleepers[i]!.pid!), `the process in ${o} lives`);
        assert.ok(existsSync(o), `${o} is there`);
      }
    } finally {
      for (const p of sleepers) p.kill('SIGKILL');
      for (const p of sleepers) await waitFor('a sleeper to leave', () => !alive(p.pid!) || null, 5);
      for (const o of orphans) if (existsSync(o)) rmdirSync(o);
    }
  });

  it('a helper that moves into a child cgroup of its own trial cgroup is ended, and the subtree removed', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'helper.pid');
    const childFile = join(dir, 'child.cgroup');
    const program = join(dir, 'nest.py');
    writeFileSync(
      program,
      `${PY_STEPS}
import os, subprocess

${OWN_CGROUP_DIR}
child = os.path.join(own_cgroup_dir(), "helper")
os.mkdir(child)
helper = subprocess.Popen(["sleep", "300"], start_new_session=True)
with open(os.path.join(child, "cgroup.procs"), "w") as f:
    f.write(str(helper.pid))
open(${JSON.stringify(pidFile)}, "w").write(str(helper.pid))
open(${JSON.stringify(childFile)}, "w").write(child)
steps()
`,
    );
    const workload = new CommandWorkload(
      { kind: 'command', command: [program], python: PYTHON, protocol: 'required' },
      dir,
    );
    const r = await runTrial(
      { workload, limits: { mechanism: 'auto', timeout: 30 }, scratchDir: join(dir, 'scratch') },
      {
        index: 0,
        stage: 's',
        role: { kind: 'probe' },
        config: { batch_size: 1 },
        measure: { warmupSteps: 0, steps: 2 },
      },
    );
    assert.equal(r.outcome, 'ok', `${r.reason}\n${r.stderr_tail}`);
    const helper = Number(readFileSync(pidFile, 'utf8'));
    await waitFor('the helper to be gone', () => !alive(helper) || null, 5);
    const child = readFileSync(childFile, 'utf8');
    assert.equal(existsSync(child), false, `${child} was removed with the trial's cgroup`);
  });

  it('a daemon that time --setup starts lives through the benchmark and ends with the run (issue 45)', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'daemon.pid');
    const r = await execa(
      process.execPath,
      [
        CLI,
        'time',
        '-S',
        'sh',
        '--setup',
        `setsid sleep 300 >/dev/null 2>&1 & echo $! > ${pidFile}`,
        '-r',
        '3',
        '--out',
        dir,
        'true',
      ],
      { reject: false },
    );
    assert.equal(r.exitCode, 0, r.stderr);
    const daemon = Number(readFileSync(pidFile, 'utf8'));
    await waitFor('the daemon to be gone', () => !alive(daemon) || null, 5);
  });

  it('a daemon that bisect --build starts ends with the bisection (issue 45)', async () => {
    const repoDir = tempDir('tunebench-bisect-');
    const shas = makeBisectRepo(repoDir, { commits: 4, slowAt: 2, slowdown: 1 });
    const pids = join(tempDir(), 'daemons');
    const build = `setsid sleep 300 >/dev/null 2>&1 & echo $! >> ${pids}; exit 0`;
    const p = await execa(
      process.execPath,
      [
        CLI,
        'bisect',
        '--repo',
        repoDir,
        '--good',
        shas[0]!,
        '--bad',
        shas.at(-1)!,
        '--no-draw',
        '--out',
        tempDir(),
        '--build',
        build,
        '--',
        'sh work.sh',
      ],
      { reject: false },
    );
    assert.equal(p.exitCode, 0, p.stderr);
    const started = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    assert.ok(started.length >= 2, `${started.length} builds`);
    for (const pid of started) await waitFor(`build daemon ${pid} to be gone`, () => !alive(pid) || null, 5);
  });
});
