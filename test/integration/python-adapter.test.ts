// The Python adapter's own unit tests, run under Debian's /usr/bin/python3 (torch hidden in one suite).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ROOT } from '../support/paths.js';

async function hasTorch(): Promise<boolean> {
  return (await execa('/usr/bin/python3', ['-c', 'import torch'], { reject: false })).exitCode === 0;
}

describe('harness/workloads/python/tunebench.py', () => {
  it('passes its unittest suite under /usr/bin/python3', async () => {
    const r = await execa('/usr/bin/python3', ['-m', 'unittest', 'discover', '-s', join(ROOT, 'test', 'python'), '-v'], { reject: false, all: true });
    assert.equal(r.exitCode, 0, r.all);
    assert.match(r.all ?? '', /Ran (\d+) tests/);
    assert.ok(Number(/Ran (\d+) tests/.exec(r.all ?? '')![1]) >= 18);
    // With Debian's torch installed (CI installs it), the real-torch tests run rather than skip.
    if (process.env['CI'] === 'true' || (await hasTorch())) assert.doesNotMatch(r.all ?? '', /skipped/, 'real-torch tests were skipped');
  });

  it('reports steps through the protocol from a real Python script', async () => {
    const { CommandWorkload } = await import('../../harness/workloads/command/workload.js');
    const { runTrial } = await import('../../harness/trial/run-trial.js');
    const { tempDir } = await import('../support/paths.js');
    const script = join(tempDir(), 'train.py');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      script,
      [
        'import tunebench',
        'def train():',
        '    cfg = tunebench.config()',
        '    timer = tunebench.StepTimer()',
        '    data = [list(range(cfg.batch_size))] * (cfg.warmup_steps + cfg.steps)',
        '    for batch in timer.batches(data):',
        '        with timer.step(samples=len(batch)):',
        '            sum(x * x for x in batch)',
        '    timer.finish()',
        'tunebench.main(train)',
      ].join('\n'),
    );
    const workload = new CommandWorkload({ kind: 'command', command: [script], python: '/usr/bin/python3', protocol: 'required' }, ROOT);
    const r = await runTrial({ workload, limits: { mechanism: 'auto', timeout: 30 }, scratchDir: tempDir() }, { index: 0, stage: 's', role: 'probe', config: { batch_size: 32 }, measure: { warmupSteps: 1, steps: 3 } });
    assert.equal(r.outcome, 'ok', r.reason + r.stderr_tail);
    assert.equal(r.steps.length, 3);
    assert.equal(r.warmup_steps, 1);
    assert.ok(r.steps.every((s) => s.samples === 32 && s.data_wait_seconds !== undefined));
    assert.ok(r.peak_rss_bytes! > 1e6);
  });
});
