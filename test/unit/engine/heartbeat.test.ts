// In plain (piped) output a long trial is never silent: a heartbeat line with its steps and memory.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { createProgress } from '../../../harness/cli/progress.js';

describe('progress heartbeat', () => {
  it('prints the running trial with its steps and memory at least every heartbeat, and nothing once it ended', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const p = createProgress('plain', out, 0.2);
    p.stage('max-batch-1', 'max-batch');
    p.trialStart({
      stage: 'max-batch-1',
      n: 3,
      ofAbout: 9,
      config: { batch_size: 104 },
      role: 'confirm',
      show: ['batch_size'],
    });
    for (let i = 0; i < 2; i++) p.trialEvent({ event: 'step', samples: 104, seconds: 9, memory_bytes: 1861 * 2 ** 20 });
    await new Promise((r) => setTimeout(r, 700));
    assert.match(
      text,
      /\[max-batch-1\] trial 3 confirm batch_size=104 still running: 2 steps, memory 1\.82 GiB, [\d.]+ ms so far/,
    );
    const beats = text.split('\n').filter((l) => /still running/.test(l)).length;
    assert.ok(beats >= 2, `${beats} heartbeats in 0.7 s at 0.2 s`);
    p.finish();
    const before = text;
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(text, before, 'no heartbeat after finish');
  });
});
