// What a trial record keeps of the workload's steps: warm-up steps as reported (marked as warm-up),
// the epochs the steps spanned, and a diagnosis when a workload reports far more steps than it was
// asked for (a loop that never stops ran every trial to its timeout, with only "no config finished").
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runTrial, stepOverrun } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { tempDir } from '../support/paths.js';
import { requireSystem } from '../support/system.js';

/** A script that reports `count` steps (None: forever), ignoring TUNEBENCH_STEPS, as the README's old snippet did. */
function script(count: number | null): string {
  const file = join(tempDir(), 'loop.py');
  writeFileSync(
    file,
    [
      'import itertools, json, os, time',
      'path = os.environ["TUNEBENCH_EVENTS"]',
      'warmup = int(os.environ["TUNEBENCH_WARMUP_STEPS"])',
      `for i in (itertools.count() if ${count === null ? 'True' : 'False'} else range(${count ?? 0})):`,
      '    with open(path, "a") as f:',
      '        f.write(json.dumps({"event": "step", "samples": 4, ' +
        '"seconds": 0.001 * (i + 1), "warmup": i < warmup, "epoch": i // 5}) + "\\n")',
      '    time.sleep(0.01)',
      'with open(path, "a") as f:',
      '    f.write(json.dumps({"event": "done"}) + "\\n")',
    ].join('\n'),
  );
  return file;
}

async function trial(file: string, timeout: number) {
  const workload = new CommandWorkload(
    { kind: 'command', command: [file], python: '/usr/bin/python3', protocol: 'required' },
    tempDir(),
  );
  return runTrial(
    { workload, limits: { mechanism: 'none', timeout }, scratchDir: tempDir() },
    { index: 0, stage: 's', role: { kind: 'probe' }, config: { batch_size: 4 }, measure: { warmupSteps: 2, steps: 3 } },
  );
}

describe('step accounting in the trial record', () => {
  const skip = requireSystem('python3');
  it('keeps warm-up steps as reported and counts the epochs the steps spanned', { skip }, async () => {
    const r = await trial(script(5 + 7), 30);
    assert.equal(r.outcome, 'ok', r.reason);
    assert.equal(r.warmup_steps, 2);
    assert.deepEqual(
      r.warmup!.map((s) => s.seconds),
      [0.001, 0.002],
    );
    assert.equal(r.steps.length, 10);
    assert.equal(r.epochs, 3); // steps 0-4, 5-9, 10-11
    // 12 steps for 5 asked is not yet "far more".
    assert.equal(r.notes, undefined);
  });

  it('diagnoses a workload that reports far more steps than asked', { skip }, async () => {
    const r = await trial(script(40), 30);
    assert.equal(r.outcome, 'ok', r.reason);
    assert.match(
      r.notes!.join('\n'),
      /reported 40 steps for 5 asked .* does not stop when the trial has its steps.*timer\.batches\(loader\)/,
    );
  });

  it('says why a workload that never stops timed out', { skip, timeout: 30_000 }, async () => {
    const r = await trial(script(null), 3);
    assert.equal(r.outcome, 'timeout');
    assert.match(r.reason, /does not stop when the trial has its steps/);
  });

  it('draws the line at more than twice the steps asked, plus two', () => {
    assert.equal(stepOverrun(12, { warmupSteps: 2, steps: 3 }), undefined);
    assert.match(stepOverrun(13, { warmupSteps: 2, steps: 3 })!, /reported 13 steps for 5 asked/);
  });
});
