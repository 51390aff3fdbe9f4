// Warm start (workload.warm_start: fork): trials forked from a Python server are as isolated as fresh
// processes (memory, globals, environment, arguments), fail the same way (OOM under a cap, timeout), and
// nothing outlives the harness, even when it is killed with SIGKILL.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import type { RoleKind, TrialRecord } from '../../harness/domain/index.js';
import { CommandWorkload, PYTHON_ADAPTER_DIR } from '../../harness/workloads/command/workload.js';
import { runTrial, type TrialContext } from '../../harness/trial/run-trial.js';
import { WarmPool } from '../../harness/trial/warm-pool.js';
import { WarmServer } from '../../harness/trial/warm-server.js';
import { CLI, tempDir } from '../support/paths.js';
import { PYTHON, requireSystem } from '../support/system.js';
import { waitFor } from '../support/wait.js';

/** A trial that reports what it saw: its process, the server's, module state, arguments and environment. */
const PROBE_SCRIPT = `
import os, sys, time, tunebench
SEEN = {"trials": 0}
HELD = []

def setup():
    return {"server": os.getpid()}

def train(state):
    cfg = tunebench.config()
    SEEN["trials"] += 1
    held_before = len(HELD)
    block = bytearray(cfg.get_int("hold_mb", 0) * 2**20)
    for i in range(0, len(block), 4096):
        block[i] = 1  # touch every page: resident, not only reserved
    HELD.append(block)
    if cfg.get_int("alloc_mb", 0):
        bytearray(cfg.get_int("alloc_mb") * 2**20)
    if cfg.get_float("sleep", 0):
        time.sleep(cfg.get_float("sleep"))
    timer = tunebench.StepTimer()
    for batch in timer.batches([[0] * cfg.batch_size] * 3):
        with timer.step():
            pass
    timer.finish({
        "pid": os.getpid(), "ppid": os.getppid(), "pgid": os.getpgid(0), "server": state["server"],
        "trials_seen": SEEN["trials"], "held_before": held_before, "argv": sys.argv,
        "env_only_first": os.environ.get("TUNEBENCH_ONLY_FIRST"),
    })

tunebench.main(train, setup=setup)
`;

const dirs: string[] = [];
after(() => {
  // Any process still running one of this file's scripts is a leak.
  const left = dirs.flatMap((d) => processesRunning(d));
  assert.deepEqual(left, [], `processes left behind: ${left.join(', ')}`);
});

/** Pids of the processes whose command line names a file under `dir`. */
function processesRunning(dir: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (cmdline.includes(dir) && state !== 'Z') out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

function scriptDir(files: Record<string, string>): string {
  const dir = tempDir('tunebench-warm-');
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function context(dir: string, warm: boolean, limits: Partial<TrialContext['limits']> = {}): TrialContext {
  const workload = new CommandWorkload(
    {
      kind: 'command',
      command: [join(dir, 'train.py'), '--batch={batch_size}'],
      python: PYTHON,
      protocol: 'required',
      env: { PYTHONPATH: dir },
      ...(warm ? { warm_start: 'fork' as const } : {}),
    },
    dir,
  );
  return {
    workload,
    limits: { mechanism: 'auto', timeout: 30, ...limits },
    scratchDir: join(dir, 'scratch'),
    ...(warm ? { warm: new WarmPool(30) } : {}),
  };
}

let index = 0;
const trial = (ctx: TrialContext, config: Record<string, number | string>) =>
  runTrial(ctx, {
    index: index++,
    stage: 's',
    role: { kind: 'probe' },
    config: { batch_size: 4, ...config },
    measure: { warmupSteps: 1, steps: 2 },
  });

const report = (r: TrialRecord) => r.workload_report as Record<string, unknown>;

describe('warm start: forked trials', () => {
  it(
    'are forks of one server, each in its own process group, and nothing of one trial reaches the next',
    { skip: requireSystem('python3') },
    async () => {
      const dir = scriptDir({ 'train.py': PROBE_SCRIPT });
      const ctx = context(dir, true);
      try {
        const first = await trial(ctx, { hold_mb: 300, only_first: 'yes', batch_size: 8 });
        const second = await trial(ctx, { hold_mb: 0 });
        for (const r of [first, second]) {
          assert.equal(r.outcome, 'ok', `${r.reason} ${r.stderr_tail}`);
          assert.equal(r.launch, 'fork');
          assert.equal(r.steps.length, 2);
        }
        const [a, b] = [report(first), report(second)];
        // Both forked from the same server, each a new process leading its own group.
        assert.equal(a['ppid'], a['server']);
        assert.equal(b['ppid'], a['server']);
        assert.notEqual(a['pid'], b['pid']);
        assert.equal(a['pgid'], a['pid']);
        assert.equal(b['pgid'], b['pid']);
        // Module state and memory the first trial left behind never reach the second.
        assert.equal(a['trials_seen'], 1);
        assert.equal(b['trials_seen'], 1);
        assert.equal(b['held_before'], 0);
        assert.ok(first.peak_rss_bytes! > 300 * 2 ** 20, `first trial peak ${first.peak_rss_bytes}`);
        assert.ok(
          second.peak_rss_bytes! < first.peak_rss_bytes! - 250 * 2 ** 20,
          `second trial peak ${second.peak_rss_bytes} after a first of ${first.peak_rss_bytes}`,
        );
        // Each trial has its own arguments and protocol variables; one trial's variable is not left for the next.
        assert.deepEqual(a['argv'], [join(dir, 'train.py'), '--batch=8']);
        assert.deepEqual(b['argv'], [join(dir, 'train.py'), '--batch=4']);
        assert.equal(a['env_only_first'], 'yes');
        assert.equal(b['env_only_first'], null);
      } finally {
        ctx.warm!.close();
      }
    },
  );

  it(
    'run a confirmation, a boundary repeat, a final confirmation and any run until memory flattens as fresh processes',
    { skip: requireSystem('python3') },
    async () => {
      const dir = scriptDir({ 'train.py': PROBE_SCRIPT });
      const ctx = context(dir, true);
      try {
        const byRole = async (role: RoleKind) =>
          runTrial(ctx, {
            index: index++,
            stage: 's',
            role: { kind: role },
            config: { batch_size: 4 },
            measure: { warmupSteps: 1, steps: 2 },
          });
        const probe = await byRole('probe');
        assert.equal(probe.launch, 'fork');
        assert.equal(report(probe)['ppid'], report(probe)['server']);
        for (const role of ['confirm', 'repeat', 'final-confirm'] as const) {
          const r = await byRole(role);
          assert.equal(r.outcome, 'ok', `${role}: ${r.reason} ${r.stderr_tail}`);
          assert.equal(r.launch, undefined, `${role} was forked`);
          // Its own process: not a child of the warm server, and its setup() ran in it.
          assert.notEqual(report(r)['ppid'], report(probe)['server']);
          assert.equal(report(r)['server'], report(r)['pid']);
          assert.ok(
            (r.notes ?? []).some((n) => n.includes(`a ${role} runs as a fresh process`)),
            r.notes?.join('; '),
          );
        }
        // A probe that runs until memory flattens (after a failed confirmation) decides holding too.
        const long = await runTrial(ctx, {
          index: index++,
          stage: 's',
          role: { kind: 'probe' },
          config: { batch_size: 4 },
          measure: { warmupSteps: 1, steps: 2, plateau: { min_steps: 3, window: 10, tolerance: 0.002 } },
        });
        assert.equal(long.launch, undefined, 'a run until memory flattens was forked');
        assert.ok((long.notes ?? []).some((n) => n.includes('a run until memory flattens runs as a fresh process')));
      } finally {
        ctx.warm!.close();
      }
    },
  );

  it(
    'classify an OOM under the memory cap exactly as a fresh process does',
    { skip: requireSystem('python3') ?? requireSystem('prlimit') },
    async () => {
      const dir = scriptDir({ 'train.py': PROBE_SCRIPT });
      const cap = { memory: 256 * 2 ** 20, mechanism: 'prlimit' as const };
      const warm = context(dir, true, cap);
      const fresh = context(dir, false, cap);
      try {
        for (const alloc_mb of [16, 1024]) {
          const forked = await trial(warm, { alloc_mb });
          const spawned = await trial(fresh, { alloc_mb });
          assert.equal(forked.launch, 'fork');
          assert.equal(spawned.launch, undefined);
          assert.equal(forked.outcome, alloc_mb === 16 ? 'ok' : 'oom', `${forked.reason} ${forked.stderr_tail}`);
          assert.equal(forked.outcome, spawned.outcome);
          assert.equal(forked.reason, spawned.reason);
          assert.equal(forked.exit_code, spawned.exit_code);
          assert.equal(forked.limit.mechanism, 'prlimit-as');
        }
      } finally {
        warm.warm!.close();
      }
    },
  );

  it(
    "classify PyTorch's CPU allocator OOM exactly as a fresh process does",
    { skip: requireSystem('torch') ?? requireSystem('prlimit') },
    async () => {
      const dir = scriptDir({
        'train.py': [
          'import tunebench, torch',
          'def train():',
          '    cfg = tunebench.config()',
          '    timer = tunebench.StepTimer()',
          '    for _ in timer.batches(range(10)):',
          '        with timer.step(samples=cfg.batch_size):',
          '            torch.ones(cfg.batch_size, 2**20).sum()  # 4 MiB a sample',
          '    timer.finish()',
          'tunebench.main(train)',
        ].join('\n'),
      });
      const cap = { memory: 1.25 * 2 ** 30, mechanism: 'prlimit' as const };
      const warm = context(dir, true, cap);
      const fresh = context(dir, false, cap);
      try {
        for (const batch_size of [16, 512]) {
          const forked = await trial(warm, { batch_size });
          const spawned = await trial(fresh, { batch_size });
          assert.equal(forked.launch, 'fork', forked.notes?.join(' '));
          assert.equal(forked.outcome, batch_size === 16 ? 'ok' : 'oom', `${forked.reason} ${forked.stderr_tail}`);
          assert.equal(forked.outcome, spawned.outcome);
          assert.equal(forked.exit_code, spawned.exit_code);
          if (forked.outcome === 'oom') {
            assert.match(forked.stderr_tail, /DefaultCPUAllocator: can't allocate memory/);
            assert.match(spawned.stderr_tail, /DefaultCPUAllocator: can't allocate memory/);
          }
        }
      } finally {
        warm.warm!.close();
      }
    },
  );

  it('end within their timeout when they hang, and leave no process', { skip: requireSystem('python3') }, async () => {
    const dir = scriptDir({ 'train.py': PROBE_SCRIPT });
    const ctx = context(dir, true, { timeout: 2 });
    try {
      const started = Date.now();
      const r = await trial(ctx, { sleep: 60 });
      const seconds = (Date.now() - started) / 1000;
      assert.equal(r.launch, 'fork');
      assert.equal(r.outcome, 'timeout');
      assert.ok(seconds < 2 + 2 + 1.5, `the hanging trial took ${seconds} s`);
      // Only the server is left running.
      const pid = (report(r) ?? {})['pid'];
      assert.equal(pid, undefined, 'a killed trial reports nothing');
      assert.equal(processesRunning(dir).length, 1, `processes: ${processesRunning(dir).join(' ')}`);
    } finally {
      ctx.warm!.close();
    }
    await waitFor('the server to exit', () => (processesRunning(dir).length === 0 ? true : undefined), 5);
  });
});

describe('warm start: when a script cannot be served warm', () => {
  it(
    'falls back to fresh processes, with a note, when CUDA is initialised in the server',
    { skip: requireSystem('python3') },
    async () => {
      // A stand-in torch (there is no GPU here) whose CUDA says it is initialised, as after an import that touched it.
      const dir = scriptDir({
        'torch/__init__.py': [
          'class cuda:',
          '    is_initialized = staticmethod(lambda: True)',
          '    is_available = staticmethod(lambda: False)',
        ].join('\n'),
        'train.py': `import torch\n${PROBE_SCRIPT}`,
      });
      const ctx = context(dir, true);
      try {
        const first = await trial(ctx, {});
        const second = await trial(ctx, {});
        for (const r of [first, second]) {
          assert.equal(r.outcome, 'ok', `${r.reason} ${r.stderr_tail}`);
          assert.equal(r.launch, undefined);
        }
        assert.match(first.notes?.join(' ') ?? '', /warm start is off for this script: CUDA is already initialised/);
        assert.equal(second.notes, undefined, 'the note is given once');
      } finally {
        ctx.warm!.close();
      }
    },
  );

  it(
    'falls back to fresh processes when the script never calls tunebench.main()',
    { skip: requireSystem('python3') },
    async () => {
      // Speaks the protocol by hand: without a trial's variables it has nothing to do and exits.
      const dir = scriptDir({
        'train.py': [
          'import json, os',
          'path = os.environ.get("TUNEBENCH_EVENTS")',
          'if path:',
          '    with open(path, "a") as f:',
          '        for _ in range(3):',
          '            f.write(json.dumps({"event": "step", "samples": 4, "seconds": 0.01}) + "\\n")',
          '        f.write(json.dumps({"event": "done"}) + "\\n")',
        ].join('\n'),
      });
      const ctx = context(dir, true);
      try {
        const r = await trial(ctx, {});
        assert.equal(r.outcome, 'ok', `${r.reason} ${r.stderr_tail}`);
        assert.equal(r.launch, undefined);
        assert.match(r.notes?.join(' ') ?? '', /without reaching tunebench\.main\(\)/);
      } finally {
        ctx.warm!.close();
      }
    },
  );
});

describe('warm start: the harness', () => {
  const experiment = (dir: string, sleep: number) =>
    [
      'name: warm',
      'workload:',
      '  kind: command',
      `  command: [${JSON.stringify(join(dir, 'train.py'))}]`,
      `  python: ${PYTHON}`,
      '  protocol: required',
      '  warm_start: fork',
      `  params: { sleep: ${sleep} }`,
      'limits: { timeout: 60s }',
      'measure: { warmup_steps: 1, steps: 2 }',
      'stages:',
      '  - kind: compare',
      '    param: batch_size',
      '    arms: [4, 8]',
      '    repeats: 2',
      '    max_rounds: 2',
    ].join('\n');

  it(
    'forks every trial of a run and leaves no process when the run ends',
    { skip: requireSystem('python3') },
    async () => {
      const dir = scriptDir({ 'train.py': PROBE_SCRIPT });
      writeFileSync(join(dir, 'warm.yaml'), experiment(dir, 0));
      const r = await execa('node', [CLI, 'run', join(dir, 'warm.yaml'), '--out', join(dir, 'out'), '--quiet'], {
        reject: false,
        all: true,
      });
      assert.equal(r.exitCode, 0, r.all);
      const runs = readdirSync(join(dir, 'out', 'warm'));
      const lines = readFileSync(join(dir, 'out', 'warm', runs[0]!, 'trials.jsonl'), 'utf8')
        .trim()
        .split('\n');
      const records = lines.map((l) => JSON.parse(l) as TrialRecord);
      assert.ok(records.length >= 4);
      assert.ok(records.every((t) => t.launch === 'fork' && t.outcome === 'ok'));
      assert.equal(new Set(records.map((t) => report(t)['server'])).size, 1, 'one server for the run');
      assert.deepEqual(processesRunning(dir), []);
    },
  );

  it(
    'killed with SIGKILL, takes its warm server and the running trial with it',
    { skip: requireSystem('python3') },
    async () => {
      const dir = scriptDir({ 'train.py': PROBE_SCRIPT });
      writeFileSync(join(dir, 'warm.yaml'), experiment(dir, 300));
      const harness = execa('node', [CLI, 'run', join(dir, 'warm.yaml'), '--out', join(dir, 'out'), '--quiet'], {
        reject: false,
      });
      // The server and a forked trial run the same script.
      await waitFor(
        'the warm server and a forked trial',
        () => (processesRunning(dir).length >= 2 ? true : undefined),
        30,
      );
      harness.kill('SIGKILL');
      await harness;
      await waitFor(
        'every process of the killed harness to end',
        () => (processesRunning(dir).length === 0 ? true : undefined),
        5,
      );
    },
  );
});

describe('warm start: the server protocol', () => {
  it(
    'verifies a forked trial that ends before the harness reads its reply (the server keeps it until acknowledged)',
    { skip: requireSystem('python3') },
    async () => {
      // A trial that returns at once: the child exits within a millisecond of the fork. Unless the
      // server keeps it unreaped until the harness has seen it in /proc, some forks are refused as lies.
      const dir = scriptDir({
        'train.py': 'import tunebench\n\ndef train():\n    return None\n\ntunebench.main(train)\n',
      });
      // The server's streams are unref'd (the harness never waits for it): a timer keeps the test alive.
      const alive = setInterval(() => undefined, 1000);
      const started = await WarmServer.start({
        argv: [PYTHON, join(dir, 'train.py')],
        env: { PYTHONPATH: `${PYTHON_ADAPTER_DIR}:${dir}` },
        cwd: dir,
        readySeconds: 30,
      });
      assert.ok(!('refused' in started), 'refused' in started ? started.refused : '');
      const server = started;
      try {
        for (let i = 0; i < 40; i++) {
          const forked = await server.fork({
            id: `t${i}`,
            argv: [join(dir, 'train.py')],
            env: {},
            stderrPath: join(dir, `t${i}.stderr`),
            memoryBytes: null,
            cgroupProcs: [],
          });
          const exit = await forked.exited;
          assert.equal(exit.serverGone, undefined, `fork ${i}: ${exit.serverGone}`);
          assert.equal(
            exit.code,
            0,
            `fork ${i} exited ${exit.code} ${exit.signal}: ${readFileSync(join(dir, `t${i}.stderr`), 'utf8')}`,
          );
          server.endStragglers(forked.root);
        }
        assert.ok(server.alive);
      } finally {
        server.close();
        clearInterval(alive);
      }
    },
  );
});
