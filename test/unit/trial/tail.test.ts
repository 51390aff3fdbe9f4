// The stderr tail keeps the end of a long stream within its byte limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TailBuffer } from '../../../harness/trial/tail.js';

describe('TailBuffer', () => {
  it('keeps the last bytes of many chunks', () => {
    const t = new TailBuffer(100);
    for (let i = 0; i < 1000; i++) t.push(Buffer.from(`line ${i}\n`));
    const text = t.text();
    assert.ok(text.length <= 100);
    assert.ok(text.endsWith('line 999\n'));
    assert.ok(!text.includes('line 900\n'));
  });
  it('cuts one huge chunk to its end', () => {
    const t = new TailBuffer(10);
    t.push(Buffer.from(`${'a'.repeat(50)}0123456789`));
    assert.equal(t.text(), '0123456789');
  });
});
