// The protocol's event parser against numbers no measurement can give (issue 15, item 8): each such
// event is malformed, counted like a line of garbage, and never reaches a trial's steps.
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EventReader } from '../../../harness/trial/event-reader.js';
import { parseEventLine } from '../../../harness/workloads/protocol/events.js';
import { tempDir } from '../../support/paths.js';

const bad = (line: string) => assert.equal(parseEventLine(line), null, `${line} should be malformed`);
const good = (line: string) => assert.ok(parseEventLine(line), `${line} should be accepted`);

describe('event numbers', () => {
  it('rejects steps whose samples or seconds overflow throughput, or are no measurement at all', () => {
    bad('{"event":"step","samples":1e300,"seconds":1e-300}');
    bad('{"event":"step","samples":1.7e308,"seconds":1}');
    bad('{"event":"step","samples":64,"seconds":1e-300}');
    bad('{"event":"step","samples":1e400,"seconds":1}');
    bad('{"event":"step","samples":64,"seconds":1e400}');
    bad('{"event":"step","samples":64,"seconds":0}');
    bad('{"event":"step","samples":64,"seconds":1e12}');
    bad('{"event":"step","samples":-1,"seconds":1}');
  });

  it('rejects a data wait that is negative, not a number, or longer than its step', () => {
    bad('{"event":"step","samples":64,"seconds":0.02,"data_wait_seconds":-0.001}');
    bad('{"event":"step","samples":64,"seconds":0.02,"data_wait_seconds":0.5}');
    bad('{"event":"step","samples":64,"seconds":0.02,"data_wait_seconds":1e400}');
    bad('{"event":"step","samples":64,"seconds":0.02,"data_wait_seconds":"0.001"}');
  });

  it("checks a step's optional memory_bytes and device like a memory event's figures", () => {
    good('{"event":"step","samples":64,"seconds":0.02,"memory_bytes":734003200,"device":"cuda"}');
    good('{"event":"step","samples":64,"seconds":0.02,"memory_bytes":null}');
    bad('{"event":"step","samples":64,"seconds":0.02,"memory_bytes":-1}');
    bad('{"event":"step","samples":64,"seconds":0.02,"memory_bytes":1e400}');
    bad('{"event":"step","samples":64,"seconds":0.02,"memory_bytes":"734003200"}');
    bad('{"event":"step","samples":64,"seconds":0.02,"memory_bytes":1,"device":7}');
    good('{"event":"step","samples":64,"seconds":0.02,"memory_bytes":1,"address_space_bytes":1610612736}');
    bad('{"event":"step","samples":64,"seconds":0.02,"address_space_bytes":-4096}');
    bad('{"event":"step","samples":64,"seconds":0.02,"address_space_bytes":"1610612736"}');
  });

  it('rejects memory events with non-finite or absurd byte counts', () => {
    bad('{"event":"memory","peak_bytes":1e400}');
    bad('{"event":"memory","peak_bytes":1.7e308}');
    bad('{"event":"memory","peak_bytes":1000,"peak_rss_bytes":1e400}');
    bad('{"event":"memory","peak_bytes":1000,"peak_address_space_bytes":-5}');
    bad('{"event":"memory","peak_bytes":1000,"max_memory_reserved":-1e400}');
  });

  it('still accepts real measurements, a zero-sample step and a wait equal to the step', () => {
    good('{"event":"step","samples":64,"seconds":0.021,"data_wait_seconds":0.002}');
    good('{"event":"step","samples":4096,"seconds":0.000001}');
    good('{"event":"step","samples":0,"seconds":0}');
    good('{"event":"step","samples":8,"seconds":0.3,"data_wait_seconds":0.3}');
    good('{"event":"step","samples":8,"seconds":0.3,"warmup":true}');
    good('{"event":"memory","peak_bytes":123456789,"peak_rss_bytes":1000,"device":"cpu","num_alloc_retries":0}');
    const e = parseEventLine('{"event":"step","samples":8,"seconds":0.3,"data_wait_seconds":null}');
    assert.ok(e && e.event === 'step' && e.data_wait_seconds === undefined, 'a null wait counts as not reported');
  });

  it('counts each rejected event as a malformed line of the trial', () => {
    const path = join(tempDir(), 'events.jsonl');
    appendFileSync(
      path,
      [
        '{"event":"step","samples":1e300,"seconds":1e-300}',
        '{"event":"step","samples":1.7e308,"seconds":1.7e308}',
        '{"event":"step","samples":8,"seconds":0.1,"data_wait_seconds":0.2}',
        '{"event":"memory","peak_bytes":1e999}',
        '{"event":"step","samples":8,"seconds":0.1}',
        '',
      ].join('\n'),
    );
    const reader = new EventReader(path);
    reader.finish();
    assert.equal(reader.malformed, 4);
    assert.deepEqual(
      reader.events.map((e) => e.event),
      ['step'],
    );
  });
});
