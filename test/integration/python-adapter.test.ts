// The Python adapter: its unittest suite under Debian's /usr/bin/python3, its type check (mypy --strict), a
// trial through the protocol, the reference training loop across epochs, and installing it with pip.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ROOT, tempDir } from '../support/paths.js';
import { MYPY, PYTHON, requireSystem } from '../support/system.js';
import { INVALID_EXIT_CODE, OOM_EXIT_CODE } from '../../harness/workloads/protocol/events.js';
import { OOM_PATTERNS } from '../../harness/workloads/protocol/oom-patterns.js';

const ADAPTER = join(ROOT, 'harness', 'workloads', 'python');

/** The adapter's unittest suite (test/python/), run once for the two tests that read its output. */
let suite: ReturnType<typeof runSuite> | undefined;
const runSuite = () =>
  execa(PYTHON, ['-m', 'unittest', 'discover', '-s', join(ROOT, 'test', 'python'), '-v'], {
    reject: false,
    all: true,
  });
const unittest = () => (suite ??= runSuite());

// Asked inside each suite: under CI=true a missing package fails that suite, not the whole file.
describe('harness/workloads/python/tunebench', () => {
  it('passes its unittest suite under /usr/bin/python3', { skip: requireSystem('python3') }, async () => {
    const r = await unittest();
    assert.equal(r.exitCode, 0, r.all);
    const ran = /Ran (\d+) tests/.exec(r.all ?? '');
    assert.ok(ran && Number(ran[1]) >= 18, r.all);
  });

  it('passes mypy --strict', { skip: requireSystem('mypy'), timeout: 300_000 }, async () => {
    // A cache of its own: nothing is written to the checkout, and no earlier run's cache hides an error.
    const r = await execa(
      MYPY,
      ['--strict', '--cache-dir', join(tempDir(), 'mypy-cache'), join('harness', 'workloads', 'python', 'tunebench')],
      { cwd: ROOT, reject: false, all: true },
    );
    assert.equal(r.exitCode, 0, r.all);
    assert.match(r.stdout, /^Success: no issues found/m);
  });

  it('reports steps through the protocol from a real Python script', { skip: requireSystem('python3') }, async () => {
    const { CommandWorkload } = await import('../../harness/workloads/command/workload.js');
    const { runTrial } = await import('../../harness/trial/run-trial.js');
    const script = join(tempDir(), 'train.py');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      script,
      [
        'import tunebench',
        'def train():',
        '    cfg = tunebench.config()',
        '    timer = tunebench.StepTimer()',
        '    data = [list(range(cfg.batch_size))] * 2  # an epoch of 2 batches: the trial needs 4',
        '    for batch in timer.batches(data):',
        '        with timer.step():',
        '            sum(x * x for x in batch)',
        '    assert timer.done',
        '    timer.finish()',
        'tunebench.main(train)',
      ].join('\n'),
    );
    const workload = new CommandWorkload(
      { kind: 'command', command: [script], python: PYTHON, protocol: 'required' },
      ROOT,
    );
    const r = await runTrial(
      { workload, limits: { mechanism: 'auto', timeout: 30 }, scratchDir: tempDir() },
      {
        index: 0,
        stage: 's',
        role: { kind: 'probe' },
        config: { batch_size: 32 },
        measure: { warmupSteps: 1, steps: 3 },
      },
    );
    assert.equal(r.outcome, 'ok', r.reason + r.stderr_tail);
    assert.equal(r.steps.length, 3);
    assert.equal(r.warmup_steps, 1);
    assert.ok(r.steps.every((s) => s.samples === 32 && s.data_wait_seconds !== undefined));
    assert.ok(r.peak_rss_bytes! > 1e6);
  });
});

describe('the Python adapter and the harness agree', () => {
  it(
    'on the exit codes, the OOM messages the adapter recognises, and its public API',
    { skip: requireSystem('python3') },
    async () => {
      const r = await execa(PYTHON, [
        '-c',
        [
          'import json, re, sys',
          `sys.path.insert(0, ${JSON.stringify(ADAPTER)})`,
          'import tunebench as t',
          'print(json.dumps({"oom": t.OOM_EXIT_CODE, "invalid": t.INVALID_EXIT_CODE, "all": t.__all__,',
          '  "missing": [n for n in t.__all__ if not hasattr(t, n)],',
          '  "patterns": [[p.pattern, bool(p.flags & re.I)] for p in t._OOM_PATTERNS]}))',
        ].join('\n'),
      ]);
      const py = JSON.parse(r.stdout) as {
        oom: number;
        invalid: number;
        all: string[];
        missing: string[];
        patterns: [string, boolean][];
      };
      assert.equal(py.oom, OOM_EXIT_CODE);
      assert.equal(py.invalid, INVALID_EXIT_CODE);
      // Every message the adapter calls an OOM, the harness calls one too (same expression, same case rule).
      for (const [source, ignoreCase] of py.patterns)
        assert.ok(
          OOM_PATTERNS.some((p) => p.pattern.source === source && p.pattern.flags.includes('i') === ignoreCase),
          `the adapter's OOM pattern ${source} is not in harness/workloads/protocol/oom-patterns.ts`,
        );
      assert.ok(py.patterns.length >= 4);
      assert.deepEqual(py.missing, []);
      for (const name of ['config', 'StepTimer', 'main', 'reject', 'InvalidConfig'])
        assert.ok(py.all.includes(name), name);
    },
  );
});

describe('harness/workloads/python/tunebench with real torch', () => {
  // Without torch the suite skips its real-torch tests and still passes; with it, none may skip.
  it("runs the suite's real-torch tests rather than skipping them", { skip: requireSystem('torch') }, async () => {
    const r = await unittest();
    assert.equal(r.exitCode, 0, r.all);
    assert.doesNotMatch(r.all ?? '', /skipped/, 'real-torch tests were skipped');
  });

  it(
    'runs the reference training loop across epoch boundaries in one trial',
    { skip: requireSystem('torch'), timeout: 120_000 },
    async () => {
      const events = join(tempDir(), 'events.jsonl');
      const env = {
        PYTHONPATH: ADAPTER,
        TUNEBENCH_EVENTS: events,
        TUNEBENCH_WARMUP_STEPS: '1',
        TUNEBENCH_STEPS: '6',
        TUNEBENCH_CONFIG: JSON.stringify({ batch_size: 16, num_workers: 1, epochs: 2, seq: 16, words: 16 }),
        TUNEBENCH_TRIAL_EPOCHS: '2', // as the harness sets it for a max-batch confirmation
      };
      const r = await execa(PYTHON, [join(ROOT, 'experiments', 'workloads', 'torch_transformer.py')], {
        env,
        reject: false,
        all: true,
      });
      assert.equal(r.exitCode, 0, r.all);
      const steps = readFileSync(events, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((e) => e['event'] === 'step');
      assert.deepEqual(
        steps.map((s) => s['epoch']),
        [0, 0, 0, 0, 1, 1, 1],
      );
      assert.ok(steps.every((s) => s['samples'] === 16));
    },
  );
});
