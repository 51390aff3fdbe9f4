// End to end: `tunebench run` on real ONNX Runtime children under a real cap.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, FIXTURES, ROOT, tempDir } from '../support/paths.js';
import { planLimit } from '../../harness/trial/limits.js';
import { assertExactMax, assertMaxWritten, journal, resultOf, runDir } from '../support/runs.js';
import { readRunJson } from '../../harness/experiment/run-file.js';

/** What `tunebench run --json` prints for a run of the two-stage chain experiment. */
interface ChainResult {
  chosen: Record<string, number>;
  stages: {
    name: string;
    chosen: Record<string, number>;
    result: {
      max: number;
      status: string;
      recommended: number;
      multiple_of: number;
      final_confirmation?: { from: number };
    };
  }[];
  run_dir: string;
}

// One run of a two-stage experiment (max batch, then a sweep at the chosen batch) serves the checks of
// the run directory and of the hand-over between stages: each used to start a run near the same cap.
describe('tunebench run of a max-batch stage and a sweep (--json)', () => {
  const out = tempDir();
  const stepSummary = join(tempDir(), 'step-summary.md');
  let run: { exitCode?: number | undefined; stdout: string; stderr: string };
  before(async () => {
    writeFileSync(stepSummary, '# earlier step\n\n');
    run = await execa(
      process.execPath,
      [CLI, 'run', join(FIXTURES, 'experiments', 'chain.yaml'), '--out', out, '--json'],
      { reject: false, env: { GITHUB_STEP_SUMMARY: stepSummary } },
    );
  });

  it('finds an exact max and writes the run directory', () => {
    assert.equal(run.exitCode, 0, run.stderr);
    // On GitHub Actions the summary is appended to the job's step summary, after what was there.
    assert.match(readFileSync(stepSummary, 'utf8'), /^# earlier step\n\n# tunebench: chain\n[\s\S]*## Chosen config/);
    const result = JSON.parse(run.stdout) as ChainResult;
    const dir = runDir(out, 'chain');
    assert.equal(result.run_dir, dir);
    const stage = result.stages[0]!.result;
    assert.equal(stage.status, 'exact');
    const records = journal(dir);
    assertExactMax(records, stage.max, stage.multiple_of);
    // The stage chose its recommended batch; the final confirmation with the sweep's choice may lower it.
    const chosenBatch = result.chosen['batch_size']!;
    assert.equal(stage.final_confirmation?.from ?? chosenBatch, stage.recommended);
    assert.ok(
      records.every((rec, i) => rec.index === i),
      'indices follow journal order',
    );
    // A memory cgroup of the trial's own where one can be made (root here and in CI), else prlimit.
    const mechanism = planLimit(1.5 * 2 ** 30, 'auto').mechanism;
    assert.ok(records.every((rec) => rec.limit.mechanism === mechanism && rec.limit.bytes === 1.5 * 2 ** 30));
    for (const f of ['run.json', 'chosen-config.json', 'chosen-config.env', 'chosen-config.yaml', 'summary.md'])
      assert.ok(existsSync(join(dir, f)), f);
    const chosen = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
      config: Record<string, unknown>;
      evidence: Record<string, { trials: number[] }>;
      reproduce: { env: Record<string, string> };
    };
    assert.equal(chosen.config['batch_size'], chosenBatch);
    assert.equal(chosen.reproduce.env['TUNEBENCH_BATCH_SIZE'], String(chosenBatch));
    assert.ok(
      chosen.evidence['batch_size']!.trials.every(
        (i) => records[i]!.outcome === 'ok' && records[i]!.config['batch_size'] === chosenBatch,
      ),
    );
    const env = readFileSync(join(dir, 'chosen-config.env'), 'utf8');
    assert.match(env, new RegExp(`^TUNEBENCH_BATCH_SIZE='${chosenBatch}'$`, 'm'));
    const runJson = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
      limit: { mechanism: string };
      environment: { versions: Record<string, string> };
      finished_at?: string;
    };
    assert.equal(runJson.limit.mechanism, mechanism);
    assert.ok(runJson.environment.versions['onnxruntime-node']);
    assert.ok(runJson.finished_at);
    const summary = readFileSync(join(dir, 'summary.md'), 'utf8');
    // The sweep after it set intra_op_threads, which the max was not measured with: the row says so.
    assert.match(
      summary,
      new RegExp(
        `\\| max \\(fits as found\\) \\| ${stage.max} \\| exact; smallest failing batch \\d+; max ${stage.max} ` +
          'was found with intra\\\\_op\\\\_threads unset; it was not measured with the written intra\\\\_op\\\\_threads=',
      ),
    );
    assert.ok(!existsSync(join(dir, '.scratch')), 'scratch space removed');
  });

  it('passes the max-batch choice on to the sweep that follows', () => {
    assert.equal(run.exitCode, 0, run.stderr);
    const result = JSON.parse(run.stdout) as ChainResult;
    const batch = result.stages[0]!.chosen['batch_size']!;
    assert.ok(batch > 0);
    // The final confirmation may lower the stage's answer after the sweep; the sweep ran at what the stage
    // chose before that.
    const searched = result.stages[0]!.result.final_confirmation?.from ?? batch;
    const records = journal(runDir(out, 'chain'));
    const sweep = records.filter((x) => x.stage === result.stages[1]!.name);
    assert.equal(sweep.length, 2);
    assert.ok(
      sweep.every((x) => x.config['batch_size'] === searched),
      `the sweep ran at the chosen batch ${searched}: ${sweep.map((x) => x.config['batch_size']).join(', ')}`,
    );
    assert.equal(result.chosen['batch_size'], batch);
    assert.ok([1, 2].includes(result.chosen['intra_op_threads']!));
  });
});

describe('tunebench run', () => {
  it(
    'runs the embedded default: exit 0, an oom trial in the journal, ' + 'chosen-config.json (the README command)',
    async () => {
      const out = tempDir();
      const r = await execa(process.execPath, [CLI, 'run', '--out', out], { cwd: ROOT, reject: false });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /chosen: .*batch_size=\d+/);
      assert.match(r.stdout, /^tunebench: default finished in /);
      assert.match(
        r.stderr,
        /\[max-batch\] trial 1\/~\d+ probe batch_size=8 -> ok/,
        'plain progress lines when not on a TTY',
      );
      const dir = runDir(out, 'default');
      const records = journal(dir);
      assert.ok(
        records.some((x) => x.outcome === 'oom'),
        'at least one oom trial',
      );
      assert.ok(existsSync(join(dir, 'chosen-config.json')));
      const run = readRunJson(dir, 'the test reads it');
      assert.ok(run.result, 'the run has a result');
      const maxBatch = resultOf(run.result.stages[0], 'max-batch');
      const max = maxBatch.max;
      assert.equal(maxBatch.status, 'exact');
      assert.ok(max !== null);
      assert.ok(max >= 1000 && max < 100_000, `max ${max} lands in the thousands`);
      // The default repeats its boundary: the band model places the max written, below a recorded OOM.
      assertMaxWritten(records, run.result.stages[0]!.name, maxBatch);
      // The arena comparison: rounds whose order reverses (keep off, off keep, ...) at the chosen batch,
      // at least the 4 rounds before the first look, then more until decided; ratios and verdicts.
      const arena = records.filter((x) => x.stage === 'arena');
      const order = arena.map((x) => x.config['arena']);
      assert.ok(order.length >= 8 && order.length % 2 === 0, `${order.length} arena trials`);
      assert.deepEqual(order.slice(0, 8), ['keep', 'off', 'off', 'keep', 'keep', 'off', 'off', 'keep']);
      const chosenBatch = resultOf(run.result.stages[0], 'max-batch').chosen;
      assert.ok(arena.every((x) => x.config['batch_size'] === chosenBatch && x.outcome === 'ok'));
      const cmp = resultOf(run.result.stages[1], 'compare');
      assert.equal(cmp.param, 'arena');
      const off = cmp.arms.find((a) => a.value === 'off')!;
      assert.ok(
        off.throughput_ratio &&
          off.throughput_ratio.low <= off.throughput_ratio.estimate &&
          off.throughput_ratio.estimate <= off.throughput_ratio.high,
      );
      assert.ok(['faster', 'slower', 'no significant difference'].includes(off.verdict));
      assert.ok(
        off.memory_ratio && ['less memory', 'more memory', 'no significant difference'].includes(off.memory_verdict),
      );
      assert.match(r.stdout, /arena=(keep|off)/);
      // Every trial of the arm succeeded, one per round the stage ran.
      assert.match(
        readFileSync(join(dir, 'summary.md'), 'utf8'),
        new RegExp(String.raw`## Stage arena \(compare\)[\s\S]*\| off \| ${cmp.rounds}/${cmp.rounds} \|`),
      );
    },
  );

  it('--quiet prints nothing on stderr and the summary on stdout is suppressed', async () => {
    const out = tempDir();
    const r = await execa(
      process.execPath,
      [CLI, 'run', join(FIXTURES, 'experiments', 'bad', '15-no-memory-cap.yaml'), '--out', out, '--quiet'],
      { reject: false },
    );
    assert.equal(r.exitCode, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /needs limits.memory/);
    assert.equal(existsSync(join(out, 'x')), false, 'no run directory for invalid input');
  });
});

describe('tunebench run stopped by a signal', () => {
  it('kills the current trial, keeps completed trials and exits 130', async () => {
    const out = tempDir();
    const child = execa(
      process.execPath,
      [CLI, 'run', join(FIXTURES, 'experiments', 'quick-max-batch.yaml'), '--out', out],
      { reject: false },
    );
    // Wait until at least one trial is journaled, then interrupt.
    const deadline = Date.now() + 30_000;
    let dir: string | undefined;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      const base = join(out, 'quick');
      if (!existsSync(base)) continue;
      const runs = readdirSync(base);
      const candidate = runs[0] ? join(base, runs[0]) : undefined;
      if (candidate && existsSync(join(candidate, 'trials.jsonl'))) {
        dir = candidate;
        break;
      }
    }
    assert.ok(dir, 'a trial was journaled');
    child.kill('SIGINT');
    const r = await child;
    assert.equal(r.exitCode, 130, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        'stopped by signal: stopped by SIGINT: \\d+ completed trial\\(s\\) are in .*trials\\.jsonl; ' +
          'the interrupted trial was not recorded and will run again\\. Partial report: .*report\\.html\\. ' +
          'Resume with: tunebench run --resume ',
      ),
    );
    const records = journal(dir);
    assert.ok(records.length >= 1);
    assert.ok(
      records.every((x, i) => x.index === i && ['ok', 'oom'].includes(x.outcome)),
      'no half-written or killed trial recorded',
    );
    const { execFileSync } = await import('node:child_process');
    // This checkout's trial children only: another checkout's tests may run beside these on a shared machine.
    const childJs = join(ROOT, 'dist', 'harness', 'workloads', 'onnx', 'child.js');
    const leftovers = execFileSync('ps', ['-eo', 'args'])
      .toString()
      .split('\n')
      .filter((l) => l.includes(childJs) && !l.includes('ps -eo'));
    assert.deepEqual(leftovers, [], 'no trial process left behind');
  });
});

describe('a broken workload', () => {
  it('exits 2 with the runtime message, and still writes the run directory', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.onnx'), 'not a model');
    writeFileSync(
      join(dir, 'exp.yaml'),
      'name: broken\nworkload: { kind: onnx, model: { path: bad.onnx, inputs: { input: [batch, 4] } } }\n' +
        'limits: { memory: 2GiB, timeout: 20s }\nstages: [{ kind: max-batch, ceiling: 64 }]\n',
    );
    const out = tempDir();
    const r = await execa(process.execPath, [CLI, 'run', join(dir, 'exp.yaml'), '--out', out], { reject: false });
    assert.equal(r.exitCode, 2);
    assert.match(r.stderr, /Protobuf parsing failed/);
    assert.match(r.stderr, /the workload failed in stage max-batch-1/);
    const records = journal(runDir(out, 'broken'));
    assert.equal(records.length, 1, 'it stopped at the first failure');
    assert.equal(records[0]!.outcome, 'crash');
  });
});

describe('max-batch of an arbitrary program', () => {
  it('finds the exact max of a command workload under a prlimit cap', async () => {
    const out = tempDir();
    const r = await execa(
      process.execPath,
      [CLI, 'run', join(FIXTURES, 'experiments', 'command-max-batch.yaml'), '--out', out, '--json'],
      { reject: false, env: { PATH: `${join(process.execPath, '..')}:${process.env['PATH']}` } },
    );
    assert.equal(r.exitCode, 0, r.stderr);
    const result = JSON.parse(r.stdout) as { stages: { result: { max: number; status: string } }[] };
    const { max, status } = result.stages[0]!.result;
    assert.equal(status, 'exact');
    assert.ok(max >= 8 && max < 1024, `max ${max}`);
    assertExactMax(journal(runDir(out, 'command-max-batch')), max, 4);
  });

  it('exits 2 naming a program that does not exist', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = tempDir();
    writeFileSync(
      join(dir, 'exp.yaml'),
      'name: missing\nworkload: { kind: command, command: [/no/such/trainer, "--bs={batch_size}"] }\n' +
        // prlimit execs the program itself: a missing one is the trial's exit 127, and the stage fails.
        'limits: { memory: 2GiB, mechanism: prlimit }\nstages: [{ kind: max-batch }]\n',
    );
    const r = await execa(process.execPath, [CLI, 'run', join(dir, 'exp.yaml'), '--out', tempDir()], { reject: false });
    assert.equal(r.exitCode, 2);
    assert.match(
      r.stderr,
      /invalid input: the workload failed in stage max-batch-1: .*could not start the program \(exit code 127\): .*\/no\/such\/trainer/,
    );
    // The headline says what the exit status says, not a bare "finished".
    assert.match(r.stdout, /^tunebench: missing finished with failed stages \(max-batch-1; exit 2\) in /);
    assert.doesNotMatch(r.stdout, /missing finished in/);
  });
});
