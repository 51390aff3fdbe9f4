// Workloads that attack their own containment (issue 45, broken items 3, 4, 5 and 10): code preloaded into
// the launch before it joins the trial's cgroups, a root trial that lifts its own memory cap or leaves its
// cgroups, and a fork bomb. Nothing a workload controls runs before it is in its cgroups; a trial that
// changed its limits or left its cgroups is invalid, never ok; a trial's processes are capped in number.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Experiment } from '../../harness/experiment/schema.js';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { tempDir } from '../support/paths.js';
import { PYTHON, requireSystem } from '../support/system.js';
import { waitFor } from '../support/wait.js';
import { alive, breakOutScript, OWN_CGROUP_DIR, PY_STEPS } from '../support/fault-workloads.js';

/** Runs `script` (python) as one trial under `limits`, with `env` in workload.env. */
async function trial(dir: string, script: string, limits: Experiment['limits'], env: Record<string, string> = {}) {
  const program = join(dir, 'train.py');
  writeFileSync(program, script);
  const workload = new CommandWorkload(
    { kind: 'command', command: [program], python: PYTHON, protocol: 'required', env },
    dir,
  );
  return runTrial(
    { workload, limits, scratchDir: join(dir, 'scratch') },
    { index: 0, stage: 's', role: { kind: 'probe' }, config: { batch_size: 1 }, measure: { warmupSteps: 0, steps: 2 } },
  );
}

/** A library whose constructor starts `sleep 300` in a session of its own with an empty environment (every mark shed). */
const ESCAPING_LIBRARY = `
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void escape(void) {
  const char *out = getenv("ESCAPE_PIDS");
  if (!out || fork() != 0) return;
  setsid();
  char line[32];
  int fd = open(out, O_WRONLY | O_APPEND | O_CREAT, 0644);
  write(fd, line, snprintf(line, sizeof line, "%d\\n", getpid()));
  close(fd);
  char *argv[] = {"sleep", "300", NULL}, *envp[] = {NULL};
  execve("/bin/sleep", argv, envp);
  _exit(1);
}
`;

describe('containment a workload cannot undo', { skip: requireSystem('cgroup') ?? requireSystem('cc') }, () => {
  it('LD_PRELOAD in workload.env runs nothing before the trial is in its cgroups: its escapee ends with the trial', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'escape.c'), ESCAPING_LIBRARY);
    const library = join(dir, 'escape.so');
    execFileSync('gcc', ['-shared', '-fPIC', '-o', library, join(dir, 'escape.c')]);
    const pids = join(dir, 'pids');
    const r = await trial(
      dir,
      `${PY_STEPS}\nsteps()\n`,
      { mechanism: 'auto', timeout: 30 },
      {
        LD_PRELOAD: library,
        ESCAPE_PIDS: pids,
      },
    );
    assert.equal(r.outcome, 'ok', `${r.reason}\n${r.stderr_tail}`);
    // The library ran in the program (it was preloaded there), never in the launch before the join.
    const started = existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n').map(Number) : [];
    assert.ok(started.length >= 1, 'the preloaded library ran in the workload');
    for (const pid of started) await waitFor(`escapee ${pid} to be gone`, () => !alive(pid) || null, 5);
  });

  it('a root trial that lifts its own memory cap and holds twice the cap is invalid, not ok', async () => {
    const dir = tempDir();
    const r = await trial(
      dir,
      `${PY_STEPS}${OWN_CGROUP_DIR}
import os
d = own_cgroup_dir()
v1 = os.path.exists(os.path.join(d, "memory.limit_in_bytes"))
for name in (["memory.memsw.limit_in_bytes", "memory.limit_in_bytes"] if v1 else ["memory.max"]):
    try:
        open(os.path.join(d, name), "w").write("-1" if v1 else "max")
    except OSError:
        pass
held = bytearray(400 << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
steps()
`,
      { mechanism: 'cgroup', memory: 200 * 2 ** 20, timeout: 30 },
    );
    assert.equal(r.outcome, 'invalid', `${r.outcome}: ${r.reason}\n${r.stderr_tail}`);
    assert.match(r.reason, /changed its own memory limit \(from 200\.00 MiB to unlimited\)/);
    assert.match(r.reason, /limits\.user/);
  });

  it("a root trial that writes its pid into its parent's cgroup.procs is invalid: it left its cgroups", async () => {
    const dir = tempDir();
    const r = await trial(
      dir,
      `${PY_STEPS}${OWN_CGROUP_DIR}
import os, time
parent = os.path.dirname(own_cgroup_dir())
open(os.path.join(parent, "cgroup.procs"), "w").write(str(os.getpid()))
time.sleep(1)
steps()
`,
      { mechanism: 'cgroup', memory: 512 * 2 ** 20, timeout: 30 },
    );
    assert.equal(r.outcome, 'invalid', `${r.outcome}: ${r.reason}\n${r.stderr_tail}`);
    assert.match(r.reason, /left its cgroups \(pid \d+ moved to /);
  });

  it("a root trial that disables its cgroup's OOM killer is invalid, not a timeout (issue 45, v1)", async () => {
    const dir = tempDir();
    const r = await trial(
      dir,
      `${PY_STEPS}${OWN_CGROUP_DIR}
import os, time
d = own_cgroup_dir()
control = os.path.join(d, "memory.oom_control")
if not os.path.exists(control):
    open(${JSON.stringify(join(dir, 'v2'))}, "w").close()
    steps()
    raise SystemExit(0)
open(control, "w").write("1")
held = bytearray(400 << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
steps()
`,
      { mechanism: 'cgroup', memory: 200 * 2 ** 20, timeout: 20 },
    );
    if (existsSync(join(dir, 'v2'))) return; // cgroup v2 has no switch that disables the killer
    assert.equal(r.outcome, 'invalid', `${r.outcome}: ${r.reason}\n${r.stderr_tail}`);
    assert.match(r.reason, /disabled the kernel's OOM killer in its cgroup/);
  });

  it('run as an unprivileged user (limits.user), a trial can neither lift its cap nor leave its cgroups', async () => {
    const dir = tempDir();
    chmodSync(dir, 0o755);
    const tried = join(dir, 'tried');
    writeFileSync(tried, '');
    chmodSync(tried, 0o666);
    const r = await trial(dir, breakOutScript(tried), {
      mechanism: 'cgroup',
      memory: 200 * 2 ** 20,
      timeout: 30,
      user: 'nobody',
    });
    const [uid, lift, leave] = readFileSync(tried, 'utf8').split('|');
    assert.notEqual(uid, '0', 'the workload ran as nobody');
    assert.deepEqual([lift, leave], ['Permission denied', 'Permission denied']);
    // The cap held: 400 MiB under 200 MiB is an OOM.
    assert.equal(r.outcome, 'oom', `${r.outcome}: ${r.reason}\n${r.stderr_tail}`);
  });

  it('run as root under limits.cgroupfs: read-only, a trial can neither lift its cap nor leave its cgroups', async () => {
    const dir = tempDir();
    const tried = join(dir, 'tried');
    const r = await trial(dir, breakOutScript(tried), {
      mechanism: 'cgroup',
      memory: 200 * 2 ** 20,
      timeout: 30,
      cgroupfs: 'read-only',
    });
    const [uid, lift, leave, remount] = readFileSync(tried, 'utf8').split('|');
    assert.equal(uid, '0', 'the workload ran as root');
    assert.deepEqual([lift, leave], ['Read-only file system', 'Read-only file system']);
    assert.notEqual(remount, '0', 'without CAP_SYS_ADMIN it cannot remount the cgroup filesystem');
    assert.equal(r.outcome, 'oom', `${r.outcome}: ${r.reason}\n${r.stderr_tail}`);
  });

  it("a fork bomb ends at the trial's pids limit, and the record says so", async () => {
    const dir = tempDir();
    const r = await trial(
      dir,
      `${PY_STEPS}
import os, time
children = []
for _ in range(3000):
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    children.append(pid)
steps()
`,
      { mechanism: 'auto', timeout: 30, pids: 64 },
    );
    assert.equal(r.outcome, 'crash', `${r.outcome}: ${r.reason}\n${r.stderr_tail}`);
    assert.match(
      r.reason,
      /hit its limit of 64 processes and threads \(pids\.max: \d+ fork\(s\) refused; raise limits\.pids/,
    );
  });
});
