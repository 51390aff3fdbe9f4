// Reading the events file incrementally: partial lines, malformed lines, unknown events.
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EventReader } from '../../../harness/trial/event-reader.js';
import { parseEventLine, paramEnvName } from '../../../harness/workloads/protocol/events.js';
import { tempDir } from '../../support/paths.js';

describe('EventReader', () => {
  it('returns only complete lines, then the rest on finish', () => {
    const path = join(tempDir(), 'events.jsonl');
    const reader = new EventReader(path);
    assert.deepEqual(reader.poll(), [], 'a missing file is not an error');
    appendFileSync(path, '{"event":"step","samples":8,"seconds":0.5}\n{"event":"st');
    assert.equal(reader.poll().length, 1);
    appendFileSync(path, 'ep","samples":8,"seconds":0.25}\n{"event":"done"}');
    const more = reader.poll();
    assert.equal(more.length, 1);
    assert.equal(more[0]!.event, 'step');
    assert.equal(reader.finish().length, 1, 'the unterminated last line is parsed at the end');
    assert.equal(reader.events.length, 3);
    assert.equal(reader.malformed, 0);
  });

  it('counts malformed lines and ignores unknown events, keeping unknown fields', () => {
    const path = join(tempDir(), 'events.jsonl');
    appendFileSync(
      path,
      'garbage\n{"event":"custom","x":1}\n{"event":"step","samples":"8","seconds":1}\n' +
        '{"event":"step","samples":8,"seconds":1,"gpu_util":0.9}\n',
    );
    const reader = new EventReader(path);
    reader.finish();
    assert.equal(reader.malformed, 2);
    assert.equal(reader.events.length, 1);
    assert.equal(reader.events[0]!['gpu_util'], 0.9);
  });
});

describe('protocol', () => {
  it('names parameter variables as documented', () => {
    assert.equal(paramEnvName('batch_size'), 'TUNEBENCH_BATCH_SIZE');
    assert.equal(paramEnvName('prefetch-factor'), 'TUNEBENCH_PREFETCH_FACTOR');
  });
  it('rejects negative or non-finite numbers', () => {
    assert.equal(parseEventLine('{"event":"memory","peak_bytes":-1}'), null);
    assert.equal(parseEventLine('{"event":"step","samples":1,"seconds":1e999}'), null);
    assert.equal(parseEventLine('{"no_event":1}'), null);
  });
  it('reads the timeline marks and a bracket attempt, and refuses them out of range', () => {
    assert.deepEqual(parseEventLine('{"event":"mark","name":"start","t":1800000000.5}'), {
      event: 'mark',
      name: 'start',
      t: 1800000000.5,
    });
    assert.equal(parseEventLine('{"event":"mark","name":"start","t":5}'), null);
    assert.equal(parseEventLine('{"event":"mark","name":"whenever","t":1800000000}'), null);
    const a = parseEventLine('{"event":"attempt","ok":false,"oom":true,"seconds":0.8,"message":"CUDA out of memory"}');
    assert.equal(a?.event, 'attempt');
    assert.equal(parseEventLine('{"event":"attempt","ok":"yes","oom":false,"seconds":1}'), null);
    assert.equal(parseEventLine('{"event":"attempt","ok":true,"oom":false,"seconds":-1}'), null);
  });
});
