// A workload that fails (a bug in its forward) is shown where people look: the exception's last line and
// where it was raised on the terminal and in summary.md, the run ends with exit 2 after that stage (no
// later stage, no --resume advice for a bug), and a crash line prints no throughput (issue 44).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { simulatedGpuHead } from '../support/simulated-gpu.js';
import { PYTHON } from '../support/system.js';

describe('a workload that fails', () => {
  it('a max batch that nothing fits ends the run with exit 2, and no later stage runs without a batch', async () => {
    const dir = tempDir('tunebench-nofit-');
    const file = join(dir, 'nofit.yaml');
    writeFileSync(
      file,
      `${simulatedGpuHead('nofit', ['--hold-ms=1', '--per-sample-mib=4096'])}  - kind: max-batch
    multiple_of: 8
    confirm_steps: 0
    repeat_boundary: 0
    throughput_points: 0
  - kind: sweep
    params: { num_workers: [0, 1] }
`,
    );
    const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs')], { reject: false });
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /no batch fits: the smallest batch probed, 8, ran out of memory/);
    assert.doesNotMatch(r.stderr, /== stage sweep/);
  });

  it('names its exception and where it was raised, and ends the run at the stage it broke', async () => {
    const dir = tempDir('tunebench-broken-');
    const file = join(dir, 'broken.yaml');
    writeFileSync(
      file,
      `name: broken
workload:
  kind: command
  python: ${PYTHON}
  command: [${join(PROGRAMS, 'crash_in_forward.py')}]
  protocol: required
  params: { device: cuda }
limits: { timeout: 30s }
measure: { warmup_steps: 1, steps: 2 }
stages:
  - kind: max-batch
    multiple_of: 8
    confirm_steps: 0
    repeat_boundary: 0
    throughput_points: 0
  - kind: sweep
    params: { num_workers: [0, 1] }
`,
    );
    const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs')], { reject: false });
    assert.equal(r.exitCode, 2, r.stderr);
    const where = /AttributeError: 'Model' object has no attribute 'fc'.*crash_in_forward\.py, line 13, in forward/;
    assert.match(r.stderr, where);
    // The trial's own line names the exception and prints no throughput.
    const line = r.stderr.split('\n').find((l) => /-> crash/.test(l))!;
    assert.match(
      line,
      /-> crash: AttributeError: 'Model' object has no attribute 'fc' \(crash_in_forward\.py, line 13, in forward\)/,
    );
    assert.doesNotMatch(line, /samples\/s/);
    // No later stage ran, and nothing says to resume a run whose workload has a bug.
    assert.doesNotMatch(r.stderr, /== stage sweep/);
    assert.doesNotMatch(r.stderr + r.stdout, /--resume/);
    const runDir = /run directory: (\S+)/.exec(r.stdout)?.[1];
    assert.ok(runDir && existsSync(join(runDir, 'summary.md')), r.stdout);
    // summary.md escapes Markdown's underscores.
    assert.match(
      readFileSync(join(runDir, 'summary.md'), 'utf8'),
      /AttributeError: 'Model' object has no attribute 'fc', raised in crash\\_in\\_forward\.py, line 13, in forward/,
    );
  });

  for (const stage of [
    { kind: 'sweep', yaml: '  - kind: sweep\n    params: { num_workers: [0, 1] }' },
    {
      kind: 'claim',
      yaml: "  - kind: claim\n    claim: '2x faster'\n    baseline: { num_workers: 0 }\n    candidate: { num_workers: 1 }",
    },
  ])
    it(`a ${stage.kind} stage whose trials crash names the exception and where it was raised`, async () => {
      const dir = tempDir('tunebench-broken-');
      const file = join(dir, 'broken.yaml');
      writeFileSync(
        file,
        `name: broken-${stage.kind}
workload:
  kind: command
  python: ${PYTHON}
  command: [${join(PROGRAMS, 'crash_in_forward.py')}]
  protocol: required
  params: { batch_size: 8 }
limits: { timeout: 30s }
measure: { warmup_steps: 1, steps: 2 }
stages:
${stage.yaml}
`,
      );
      const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs')], { reject: false });
      assert.equal(r.exitCode, 2, r.stderr);
      const named =
        /AttributeError: 'Model' object has no attribute 'fc', raised in crash_in_forward\.py, line 13, in forward/;
      assert.match(r.stderr, named);
      const runDir = /run directory: (\S+)/.exec(r.stdout)?.[1];
      assert.ok(runDir && existsSync(join(runDir, 'summary.md')), r.stdout);
      assert.match(
        readFileSync(join(runDir, 'summary.md'), 'utf8'),
        /AttributeError: 'Model' object has no attribute 'fc', raised in crash\\_in\\_forward\.py, line 13, in forward/,
      );
    });
});
