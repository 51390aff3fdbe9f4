// The journal: append-only lines, a truncated last line tolerated and reported.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Journal, readJournal } from '../../../harness/store/journal.js';
import { tempDir } from '../../support/paths.js';
import type { TrialRecord } from '../../../harness/domain/index.js';

const EMPTY_TELEMETRY: TrialRecord['telemetry'] = {
  interval_ms: 200,
  summary: { cpu_cores: null, machine_cpu: null, rss_bytes: null, processes: null, gpus: [] },
  series: { t: [], cpu_cores: [], per_core: [], rss_bytes: [], processes: [], gpus: [] },
};

/** A whole trial record, as the journal's schema wants it when it is read back. */
const record = (index: number): TrialRecord => ({
  v: 3,
  index,
  stage: 's',
  role: { kind: 'probe' },
  config: { batch_size: index },
  outcome: 'ok',
  reason: 'exited 0',
  exit_code: 0,
  signal: null,
  steps: [{ samples: 8, seconds: 0.01 }],
  warmup_steps: 0,
  samples_per_second: 800,
  step_seconds: { median: 0.01, p95: 0.01 },
  peak_rss_bytes: null,
  peak_limited_bytes: null,
  limit: { mechanism: 'none', bytes: null },
  telemetry: EMPTY_TELEMETRY,
  wall_seconds: 0.1,
  started_at: '2026-11-23T00:00:00.000Z',
  malformed_events: 0,
  stderr_tail: '',
  patterns_version: 1,
  ended_by: { by: 'exit', code: 0 },
});

describe('journal', () => {
  it('appends one line per record and reads them back in order', () => {
    const j = new Journal(join(tempDir(), 'trials.jsonl'));
    for (let i = 0; i < 3; i++) j.append(record(i));
    const read = readJournal(j.path);
    assert.deepEqual(
      read.records.map((r) => r.index),
      [0, 1, 2],
    );
    assert.equal(read.truncatedTail, false);
  });
  it('tolerates a last line cut short and reports corrupt lines elsewhere', () => {
    const j = new Journal(join(tempDir(), 'trials.jsonl'));
    j.append(record(0));
    appendFileSync(j.path, 'not json\n');
    // Another tunebench (a resume) appends after the damage: it reads the file as it finds it.
    new Journal(j.path).append(record(1));
    appendFileSync(j.path, '{"v":1,"index":2,"sta');
    const read = readJournal(j.path);
    assert.deepEqual(
      read.records.map((r) => r.index),
      [0, 1],
    );
    assert.equal(read.truncatedTail, true);
    assert.deepEqual(read.badLines, [2]);
  });
  it('restores what it wrote when the file is changed behind its back, and says so', () => {
    const j = new Journal(join(tempDir(), 'trials.jsonl'));
    j.append(record(0));
    appendFileSync(j.path, 'not json\n');
    j.append(record(1));
    assert.deepEqual(readJournal(j.path).badLines, []);
    assert.deepEqual(
      readJournal(j.path).records.map((r) => r.index),
      [0, 1],
    );
    assert.match(
      j.incidents.join(' '),
      /was written to by something else before trial 1 was recorded; tunebench restored its 1 record/,
    );
    rmSync(j.path);
    j.verify('by the end of the run');
    assert.deepEqual(
      readJournal(j.path).records.map((r) => r.index),
      [0, 1],
    );
    assert.match(j.incidents[1]!, /was deleted by the end of the run; tunebench restored its 2 record/);
  });

  it('keeps records of another format version apart, and rewrite drops a cut-short tail', () => {
    const j = new Journal(join(tempDir(), 'trials.jsonl'));
    j.append(record(0));
    appendFileSync(j.path, '{"v":4,"index":1}\nnull\n');
    const read = readJournal(j.path);
    assert.deepEqual(
      read.records.map((r) => r.index),
      [0],
    );
    assert.deepEqual(read.unsupported, [
      { line: 2, version: 4 },
      { line: 3, version: undefined },
    ]);
    const k = new Journal(join(tempDir(), 'trials.jsonl'));
    // A line whose keys come in another order than the schema's: a rewrite keeps it byte for byte.
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(record(0)).reverse()));
    appendFileSync(k.path, `${reordered}\n{"v":1,"ind`);
    k.rewrite(readJournal(k.path));
    assert.equal(readFileSync(k.path, 'utf8'), `${reordered}\n`);
    k.append(record(1));
    const again = readJournal(k.path);
    assert.deepEqual(
      again.records.map((r) => r.index),
      [0, 1],
    );
    assert.equal(again.truncatedTail, false);
    assert.deepEqual(again.badLines, []);
  });

  it(
    'reads format-1 and format-2 records as format 3 (how a format-1 trial ended derived, the role words typed); ' +
      'refuses a record that does not say how it ended, a typed format with role words, and words no tunebench wrote',
    () => {
      const j = new Journal(join(tempDir(), 'trials.jsonl'));
      const { ended_by: ended, ...fields } = record(0);
      const v1 = (index: number, more: object) => JSON.stringify({ ...fields, v: 1, index, role: 'probe', ...more });
      const v2 = (index: number, role: string) => JSON.stringify({ ...fields, v: 2, index, role, ended_by: ended });
      appendFileSync(
        j.path,
        [
          v1(0, {}),
          v1(1, { outcome: 'oom', exit_code: 3 }),
          v1(2, { outcome: 'crash', exit_code: null, signal: 'SIGKILL' }),
          v1(3, { outcome: 'timeout', exit_code: null, signal: 'SIGTERM' }),
          v2(4, 'candidate pair 3'),
          v2(5, 'warm-up 2'),
          JSON.stringify({ ...fields, index: 6 }),
          JSON.stringify({ ...record(7), role: 'probe' }),
          v2(8, 'training'),
        ].join('\n') + '\n',
      );
      const read = readJournal(j.path);
      assert.deepEqual(
        read.records.map((r) => [r.v, r.ended_by, r.role]),
        [
          [3, { by: 'exit', code: 0 }, { kind: 'probe' }],
          [3, { by: 'exit', code: 3 }, { kind: 'probe' }],
          [3, { by: 'signal', signal: 'SIGKILL' }, { kind: 'probe' }],
          [3, { by: 'timeout' }, { kind: 'probe' }],
          [3, ended, { kind: 'candidate', pair: 3 }],
          [3, ended, { kind: 'warm-up', round: 2 }],
        ],
      );
      assert.deepEqual(read.badLines, [7, 8, 9]);
      assert.match(read.problems[0]!, /ended_by.*a record of format 3 says how the trial ended/);
      assert.match(read.problems[1]!, /role.*a record of format 3 has a typed role, not words/);
      assert.match(read.problems[2]!, /role.*"training" is no role tunebench writes/);
    },
  );
});
