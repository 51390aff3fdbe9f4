// Workloads that attack containment (issue 31): forged pids from a warm server, descendants that
// shed every mark, an orphan of a killed harness writing into the resumed run, a trial that kills
// its warm server. No pid is signalled unless verified; under cgroups nothing of a trial survives it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import type { TrialRecord } from '../../harness/domain/index.js';
import { cgroupHost } from '../../harness/trial/cgroup-host.js';
import { planLimit } from '../../harness/trial/limits.js';
import { procStat } from '../../harness/trial/pids.js';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { WarmPool } from '../../harness/trial/warm-pool.js';
import { parseReply } from '../../harness/trial/warm-server.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { commandExperiment } from '../support/faults.js';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { runDir } from '../support/runs.js';
import { PYTHON, requireSystem } from '../support/system.js';
import { waitFor } from '../support/wait.js';

const alive = (pid: number) => {
  const s = procStat(pid);
  return s !== undefined && s.state !== 'Z';
};

/** A process the tests own, which no trial may make the harness kill. */
const sentinels: ChildProcess[] = [];
function sentinel(): number {
  const p = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  p.unref();
  sentinels.push(p);
  return p.pid!;
}
after(() => {
  for (const p of sentinels) p.kill('SIGKILL');
});

/** Writes `script` as train.py in a new folder; the context runs it as a command workload. */
function context(script: string, opts: { warm?: boolean; timeout?: number; memory?: number } = {}) {
  const dir = tempDir('tunebench-contain-');
  writeFileSync(join(dir, 'train.py'), script);
  const workload = new CommandWorkload(
    {
      kind: 'command',
      command: [join(dir, 'train.py')],
      python: PYTHON,
      protocol: 'required',
      env: { PYTHONPATH: dir, PIDS: join(dir, 'pids') },
      ...(opts.warm ? { warm_start: 'fork' as const } : {}),
    },
    dir,
  );
  const ctx: TrialContext = {
    workload,
    limits: {
      mechanism: 'auto',
      timeout: opts.timeout ?? 30,
      ...(opts.memory !== undefined ? { memory: opts.memory } : {}),
    },
    scratchDir: join(dir, 'scratch'),
    ...(opts.warm ? { warm: new WarmPool(20) } : {}),
  };
  return { ctx, dir, pids: () => readPids(join(dir, 'pids')) };
}

function readPids(path: string): number[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(Number);
}

let index = 0;
const trial = (ctx: TrialContext) =>
  runTrial(ctx, {
    index: index++,
    stage: 's',
    role: { kind: 'probe' },
    config: { batch_size: 2 },
    measure: { warmupSteps: 0, steps: 2 },
  });

/** Python: the protocol's steps and done, by hand (no adapter). */
const STEPS = `
def steps(n=2):
    import json, os
    with open(os.environ["TUNEBENCH_EVENTS"], "a") as f:
        for _ in range(n):
            f.write(json.dumps({"event": "step", "samples": 2, "seconds": 0.01}) + "\\n")
        f.write(json.dumps({"event": "done"}) + "\\n")
`;

/** Python, inside a function body: three timed steps through the adapter (its finish() follows). */
const TIMED_STEPS = `timer = tunebench.StepTimer()
    for _ in timer.batches([[0, 0]] * 3):
        with timer.step():
            pass`;

/** A fake warm server (no adapter): says `ready` with `readyPid`, then answers every fork with `forkedPid`. */
function forgingServer(readyPid: string, forkedPid: string): string {
  return `
import json, os, sys, time
${STEPS}
if os.environ.get("TUNEBENCH_WARM_SERVER"):
    os.write(3, (json.dumps({"op": "ready", "pid": ${readyPid}}) + "\\n").encode())
    for line in sys.stdin:
        req = json.loads(line)
        os.write(3, (json.dumps({"op": "forked", "id": req["id"], "pid": ${forkedPid}}) + "\\n").encode())
    time.sleep(60)
else:
    steps()
`;
}

/** Python: a grandchild in a session of its own with an empty environment (every mark shed), pid appended to $PIDS. */
const ESCAPE = `
import os, time
def escape():
    pids = os.environ["PIDS"]
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pids, "a") as f:
                f.write(f"{os.getpid()}\\n")
            os.execve("/bin/sleep", ["sleep", "300"], {})
        os._exit(0)
    time.sleep(0.3)
`;

describe('containment: a warm server that lies about pids', { skip: requireSystem('python3') }, () => {
  it('a reply naming pid 0, 1, a negative, a fraction or a string is refused by the schema', () => {
    for (const pid of [0, 1, -1, 1.5, '7', 2 ** 40])
      assert.equal(parseReply(JSON.stringify({ op: 'forked', id: 't', pid })), undefined, String(pid));
    assert.deepEqual(parseReply('{"op":"forked","id":"t","pid":4242}'), { op: 'forked', id: 't', pid: 4242 });
  });

  it('a forged ready naming another process: the server is refused, that process lives, the trial runs fresh', async () => {
    const victim = sentinel();
    const { ctx } = context(forgingServer(String(victim), 'os.getpid()'), { warm: true });
    const r = await trial(ctx);
    ctx.warm?.close();
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.launch, undefined);
    assert.match(r.notes?.join(' ') ?? '', new RegExp(`announced pid ${victim}.*forged`));
    assert.ok(alive(victim), 'the harness signalled a process the server named');
  });

  it('a forged fork reply naming another process: the server is ended, that process lives, the trial runs fresh', async () => {
    const victim = sentinel();
    const { ctx } = context(forgingServer('os.getpid()', String(victim)), { warm: true, timeout: 5 });
    const r = await trial(ctx);
    ctx.warm?.close();
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.launch, undefined);
    assert.match(r.notes?.join(' ') ?? '', new RegExp(`pid ${victim} .*not a live child of the server`));
    assert.ok(alive(victim), 'the harness signalled a process the server named');
  });

  it('a forged fork reply naming the harness itself: refused, the harness lives', async () => {
    const { ctx } = context(forgingServer('os.getpid()', String(process.pid)), { warm: true, timeout: 5 });
    const r = await trial(ctx);
    ctx.warm?.close();
    assert.equal(r.outcome, 'ok', r.reason);
    assert.match(r.notes?.join(' ') ?? '', /not a live child of the server/);
  });
});

describe('containment: descendants that shed every mark', { skip: requireSystem('python3') }, () => {
  it('a fresh trial whose helper does setsid + double fork + env -i: 3 of 3 ended with the trial', async () => {
    const { ctx, pids } = context(`${ESCAPE}${STEPS}\nescape()\nsteps()\n`);
    for (let i = 0; i < 3; i++) {
      const r = await trial(ctx);
      assert.equal(r.outcome, 'ok', r.reason);
    }
    assert.equal(pids().length, 3);
    assert.deepEqual(
      pids().filter((p) => alive(p)),
      [],
      'escaped helpers still run',
    );
  });

  it('a warm trial that double-forks, and a helper setup() starts in its own session: ended with the trial and the run', async () => {
    const script = `
import os, subprocess, tunebench
${ESCAPE}
def setup():
    helper = subprocess.Popen(["sleep", "300"], start_new_session=True)
    with open(os.environ["PIDS"] + ".setup", "a") as f:
        f.write(f"{helper.pid}\\n")
    return helper.pid

def train(helper):
    escape()
    ${TIMED_STEPS}
    timer.finish({"helper_alive": os.path.exists(f"/proc/{helper}")})

tunebench.main(train, setup=setup)
`;
    const { ctx, dir, pids } = context(script, { warm: true });
    const r = await trial(ctx);
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.launch, 'fork');
    assert.equal((r.workload_report as { helper_alive: boolean }).helper_alive, true);
    assert.equal(pids().length, 1);
    assert.ok(!alive(pids()[0]!), 'the trial left its grandchild running');
    const helper = readPids(join(dir, 'pids.setup'))[0]!;
    assert.ok(alive(helper), "setup()'s helper serves every trial while the server lives");
    ctx.warm?.close();
    await waitFor('the setup() helper to end with its server', () => (alive(helper) ? null : true), 5);
  });

  it("os._exit(3) in setup() is named as setup()'s, not as a script that never reached tunebench.main()", async () => {
    const script = `
import os, tunebench
def setup():
    os._exit(3)
def train(state):
    ${TIMED_STEPS}
    timer.finish()
tunebench.main(train, setup=setup)
`;
    const { ctx } = context(script, { warm: true });
    const r = await trial(ctx);
    ctx.warm?.close();
    const notes = r.notes?.join(' ') ?? '';
    assert.match(notes, /setup\(\) ended the server \(status 3\) before it returned/);
    assert.doesNotMatch(notes, /without reaching tunebench\.main\(\)/);
  });

  it('a trial that kills its warm server: a harness fault, the trial runs again fresh and is not an OOM', async () => {
    const script = `
import os, signal, tunebench

def setup():
    return os.getpid()

def train(server):
    if os.getppid() == server:  # a fork: its parent is the server, never the harness
        os.kill(server, signal.SIGKILL)
        import time; time.sleep(5)
    ${TIMED_STEPS}
    timer.finish()

tunebench.main(train, setup=setup)
`;
    const { ctx } = context(script, { warm: true });
    const r = await trial(ctx);
    ctx.warm?.close();
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.launch, undefined);
    assert.match(r.notes?.join(' ') ?? '', /the warm server died while trial t\d+ ran/);
  });
});

describe('containment: cgroups', { skip: requireSystem('cgroup') }, () => {
  it('limits.memory caps the whole tree: three 250 MiB workers under a 400 MiB cgroup cap are an OOM', async () => {
    const limit = planLimit(400 * 2 ** 20, 'auto');
    assert.match(limit.mechanism, /^cgroup-v[12]$/);
    const { ctx } = context(readFileSync(join(PROGRAMS, 'tree-memory.py'), 'utf8'), { memory: 400 * 2 ** 20 });
    const r: TrialRecord = await trial(ctx);
    assert.equal(r.outcome, 'oom', r.reason);
    assert.match(r.reason, /cgroup oom_kill=\d+/);
    assert.equal(r.limit.mechanism, limit.mechanism);
    assert.equal(r.limit.contained, 'cgroup');
    const host = cgroupHost();
    assert.ok(host.memory !== undefined || host.unified?.memory === true);
  });

  it("a warm trial's memory includes what setup() holds: a fork fails the cap that a fresh process fails", async () => {
    const script = `
import os, tunebench

def setup():
    held = bytearray(300 * 2**20)
    for i in range(0, len(held), 4096):
        held[i] = 1  # resident, not only reserved
    return held

def train(held):
    block = bytearray(150 * 2**20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    ${TIMED_STEPS}
    timer.finish()

tunebench.main(train, setup=setup)
`;
    const cap = 400 * 2 ** 20;
    const fresh = await trial(context(script, { memory: cap }).ctx);
    assert.equal(fresh.outcome, 'oom', fresh.reason);
    const { ctx } = context(script, { warm: true, memory: cap });
    const warm = await trial(ctx);
    ctx.warm?.close();
    assert.equal(warm.launch, 'fork');
    assert.equal(warm.outcome, 'oom', warm.reason);
    assert.match(warm.notes?.join(' ') ?? '', /includes the warm server's [\d.]+ MiB/);
  });

  it('an orphan of a SIGKILLed harness is ended by the resume and cannot write into the re-run trial', async () => {
    const dir = tempDir();
    const marker = join(dir, 'first');
    const orphanPid = join(dir, 'orphan.pid');
    const program = join(dir, 'orphan.py');
    writeFileSync(
      program,
      `
import json, os, sys, time
events = os.environ["TUNEBENCH_EVENTS"]
if not os.path.exists(${JSON.stringify(marker)}):
    open(${JSON.stringify(marker)}, "w").close()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(${JSON.stringify(orphanPid)} + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(${JSON.stringify(orphanPid)} + ".tmp", ${JSON.stringify(orphanPid)})
            os.execve(sys.executable, [sys.executable, "-c",
                "import json, sys, time\\ntime.sleep(3)\\n"
                "open(sys.argv[1], 'a').write(json.dumps({'event': 'oom', 'message': 'orphan'}) + '\\\\n')",
                events], {})
        os._exit(0)
    time.sleep(60)
with open(events, "a") as f:
    for _ in range(9):
        f.write(json.dumps({"event": "step", "samples": 1, "seconds": 0.5}) + "\\n")
        f.flush()
        time.sleep(0.5)
    f.write(json.dumps({"event": "done"}) + "\\n")
`,
    );
    const experiment = commandExperiment(
      dir,
      'orphan',
      [PYTHON, program],
      ['  protocol: required'],
      [
        'limits: { timeout: 60s }',
        'measure: { warmup_steps: 0, steps: 9 }',
        'stages:',
        '  - kind: sweep',
        '    params: { x: [1] }',
        '    strategy: grid',
        '    repeats: 1',
      ],
    );
    const out = join(dir, 'reports');
    const run = execa(process.execPath, [CLI, 'run', experiment, '--out', out, '--quiet'], { reject: false });
    const orphan = await waitFor(
      'the orphan',
      // renamed into place whole, so never read half-written (an empty file read as pid 0 failed CI)
      () => (existsSync(orphanPid) ? Number(readFileSync(orphanPid, 'utf8')) || null : null),
      30,
    );
    run.kill('SIGKILL');
    await run;
    assert.ok(alive(orphan), 'the orphan must outlive the killed harness for this attack');
    const runDirs = runDir(out, 'orphan');
    const r = await execa(process.execPath, [CLI, 'run', '--resume', runDirs, '--quiet', '--json'], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.ok(!alive(orphan), 'the resumed run left the orphan running');
    const record = JSON.parse(
      readFileSync(join(runDirs, 'trials.jsonl'), 'utf8').trim().split('\n').at(-1)!,
    ) as TrialRecord;
    assert.equal(record.outcome, 'ok', record.reason);
    assert.equal(record.steps.length, 9);
  });
});
