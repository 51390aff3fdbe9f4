// The README's PyTorch snippet runs unchanged on CPU: it is read from README.md, given the pieces a
// user's script already has (a model, a dataset, a training step), and run as a trial and on its own.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { runTrial } from '../../harness/trial/run-trial.js';
import { CommandWorkload } from '../../harness/workloads/command/workload.js';
import { ROOT, tempDir } from '../support/paths.js';
import { requireSystem } from '../support/system.js';

/** The first ```python block of the README's "PyTorch adapter" section, dedented. */
function snippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const heading = /^#{2,4} PyTorch adapter$/m.exec(readme);
  assert.ok(heading, 'README has a "PyTorch adapter" section');
  const section = readme.slice(heading.index + heading[0].length);
  const end = /^#{2,4} /m.exec(section);
  const block = /```python\n([\s\S]*?)\n\s*```/.exec(end ? section.slice(0, end.index) : section);
  assert.ok(block, 'the PyTorch adapter section has a python snippet');
  const lines = block[1]!.split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(indent)).join('\n');
}

// What the user's script defines before the snippet: a model, datasets of (x, y) pairs, a step, an
// eval loop and a checkpoint save.
const PRELUDE = `import os, tempfile, torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
device = torch.device("cpu")
torch.manual_seed(0)
dataset = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
eval_set = TensorDataset(torch.randn(40, 8), torch.randint(0, 2, (40,)))
scratch = tempfile.TemporaryDirectory()
def make_model():
    return nn.Linear(8, 2)
def train_step(batch):
    x, y = batch
    nn.functional.cross_entropy(x @ torch.ones(8, 2), y).item()
def evaluate(model, loader):
    with torch.no_grad():
        return sum(nn.functional.cross_entropy(model(x), y).item() for x, y in loader)
def save_checkpoint(model, epoch):
    torch.save(model.state_dict(), os.path.join(scratch.name, "last.pt"))
    print("saved", epoch)
`;

describe("the README's PyTorch snippet", { skip: requireSystem('torch') }, () => {
  it(
    'runs unchanged on CPU as a trial: stops at its steps, counts samples, spans epochs, evaluates and saves at each epoch end',
    {
      timeout: 60_000,
    },
    async () => {
      const file = join(tempDir(), 'train.py');
      writeFileSync(file, `${PRELUDE}\n${snippet()}\n`);
      const workload = new CommandWorkload(
        { kind: 'command', command: [file], python: '/usr/bin/python3', protocol: 'required' },
        ROOT,
      );
      // 64 samples at batch 16 are 4 batches an epoch: 1 + 5 steps cross one epoch boundary.
      const r = await runTrial(
        { workload, limits: { mechanism: 'none', timeout: 60 }, scratchDir: tempDir() },
        {
          index: 0,
          stage: 's',
          role: { kind: 'probe' },
          config: { batch_size: 16 },
          measure: { warmupSteps: 1, steps: 5 },
        },
      );
      assert.equal(r.outcome, 'ok', `${r.reason}\n${r.stderr_tail}`);
      assert.equal(r.steps.length, 5);
      assert.equal(r.warmup!.length, 1);
      assert.ok(
        r.steps.every((s) => s.samples === 16),
        'samples are rows of the (x, y) batch, not 2',
      );
      assert.equal(r.epochs, 2);
      // 4 batches in epoch 0, the trial's last 2 in epoch 1: eval and save end each epoch, in the order registered.
      assert.deepEqual(
        r.phases?.map((p) => `${p.phase}@${p.epoch}`),
        ['eval@0', 'checkpoint@0', 'eval@1', 'checkpoint@1'],
      );
      assert.ok(r.phases.every((p) => p.seconds >= 0 && p.peak_bytes! > 0));
    },
  );

  it('runs unchanged on its own: one pass over the loader', { timeout: 60_000 }, async () => {
    const file = join(tempDir(), 'train.py');
    writeFileSync(file, `${PRELUDE}\n${snippet()}\nprint("done")\n`);
    const r = await execa('/usr/bin/python3', [file], {
      env: { PYTHONPATH: join(ROOT, 'harness', 'workloads', 'python') },
      extendEnv: false,
      reject: false,
      all: true,
    });
    assert.equal(r.exitCode, 0, r.all);
    assert.match(r.stdout, /^saved 0\ndone$/m, 'one pass, then its epoch-end work once');
  });
});
