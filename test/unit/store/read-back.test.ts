// Files that tunebench wrote and reads back go through their schemas: the previous format still
// reads, and a damaged or foreign file gets a message naming the file, the line and the field.
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../harness/errors.js';
import { readBaseline, readConfirmations } from '../../../harness/history/trend.js';
import { indexRuns } from '../../../harness/history/index.js';
import { writeReports } from '../../../harness/report/write.js';
import { readJournal } from '../../../harness/store/journal.js';
import { FIXTURES, tempDir } from '../../support/paths.js';
import { REPORT_FIXTURE, resultOf } from '../../support/runs.js';
import { readRunDir, readRunJson } from '../../../harness/experiment/run-file.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';
import { noteText } from '../../../harness/report/notes.js';

/** Written by tunebench 0.1.0 at 284c88c, before the domain schemas: every stage kind and a final confirmation. */
const FORMAT_V1 = join(FIXTURES, 'runs', 'format-v1');

function copyOf(dir: string): string {
  const copy = join(tempDir(), 'run');
  cpSync(dir, copy, { recursive: true });
  return copy;
}

describe('run directories of earlier formats', () => {
  it('reads the format of 284c88c: every stage kind, its results and the journal', () => {
    const { run, records, warnings } = readRunDir(FORMAT_V1);
    assert.deepEqual(warnings, []);
    assert.equal(run.status, 'finished');
    assert.equal(records.length, 74);
    assert.ok(run.result);
    assert.deepEqual(
      run.result.stages.map((s) => s.kind),
      ['max-batch', 'sweep', 'compare', 'claim'],
    );
    const mb = resultOf(run.result.stages[0], 'max-batch');
    assert.equal(mb.status, 'exact');
    assert.equal(mb.final_confirmation?.outcome, 'ok');
    assert.equal(mb.survived.max?.batch, mb.max);
    assert.equal(resultOf(run.result.stages[3], 'claim').verdict, 'confirmed');
    assert.deepEqual(run.result.chosen, JSON.parse(readFileSync(join(FORMAT_V1, 'chosen-config.json'), 'utf8')).config);
  });

  it("reads format 1's sentence warnings through the transform into format 3's typed notes", () => {
    const dir = copyOf(FORMAT_V1);
    const path = join(dir, 'run.json');
    const json = JSON.parse(readFileSync(path, 'utf8')) as { tunebench_run: number; result: { warnings: unknown[] } };
    assert.equal(json.tunebench_run, 1);
    json.result.warnings = ['no memory cap was enforced (limits.memory unset or mechanism "none")'];
    writeFileSync(path, JSON.stringify(json));
    const run = readRunJson(dir, 'a bug');
    assert.equal(run.tunebench_run, 3);
    assert.deepEqual(run.result?.warnings, [
      {
        kind: 'note',
        source: 'format-1',
        text: 'no memory cap was enforced (limits.memory unset or mechanism "none")',
      },
    ]);
    // A format this tunebench does not read is refused with the formats it does.
    writeFileSync(path, JSON.stringify({ ...json, tunebench_run: 4 }));
    assert.throws(() => readRunJson(dir, 'a bug'), /has run format 4, and this tunebench reads formats 1, 2 and 3/);
  });

  it("reads format 2's sentence notes as text notes, and a format-3 note by its kind", () => {
    const dir = copyOf(FORMAT_V1);
    const path = join(dir, 'run.json');
    type Stages = { notes: unknown[]; result: { notes?: unknown[] } }[];
    const json = JSON.parse(readFileSync(path, 'utf8')) as { tunebench_run: number; result: { stages: Stages } };
    const sentence = 'batch 408 timed out in a probe (trial 7); a timeout says nothing about memory';
    json.tunebench_run = 2;
    json.result.stages[0]!.notes = [sentence];
    json.result.stages[0]!.result.notes = [sentence];
    writeFileSync(path, JSON.stringify(json));
    const old = readRunJson(dir, 'a bug').result!.stages[0]!;
    assert.deepEqual(old.notes, [{ kind: 'text', text: sentence }]);
    assert.deepEqual(resultOf(old, 'max-batch').notes, [{ kind: 'text', text: sentence }]);
    assert.equal(noteText(old.notes[0]!), sentence, 'an old note prints as it was written');
    const typed = { kind: 'timed-out-rerun', batch: 408, trial: 7, role: 'probe' };
    json.tunebench_run = 3;
    json.result.stages[0]!.notes = [typed];
    writeFileSync(path, JSON.stringify(json));
    const now = readRunJson(dir, 'a bug').result!.stages[0]!;
    assert.deepEqual(now.notes, [typed]);
    assert.match(noteText(now.notes[0]!), /^batch 408 timed out in a probe \(trial 7\); a timeout says nothing/);
    // A note of a kind no tunebench wrote, or a known kind without its figures, is refused by field.
    for (const bad of [{ kind: 'rumour', text: 'x' }, { kind: 'none-fits' }]) {
      json.result.stages[0]!.notes = [bad];
      writeFileSync(path, JSON.stringify(json));
      assert.throws(() => readRunJson(dir, 'a bug'), /run\.json.*at field "result\.stages\[0\]\.notes\[0\]"/s);
    }
  });

  it('reads the older report fixture (no status, no resumes, compare arms without decisions)', () => {
    const { run, records } = readRunDir(REPORT_FIXTURE);
    assert.equal(run.status, undefined);
    assert.deepEqual(run.resumes, [], 'absent resumes read as none');
    const cmp = resultOf(run.result?.stages[2], 'compare');
    assert.equal(cmp.arms[0]!.decision, undefined);
    assert.equal(typeof cmp.arms[1]!.throughput_ratio?.estimate, 'number');
    assert.ok(records.length > 0);
  });

  it('writes the reports of a previous-format run again', async () => {
    const dir = copyOf(FORMAT_V1);
    const { run, records } = readRunDir(dir);
    const files = await writeReports(dir, run, records, { kinds: STAGE_KIND_MODULES });
    assert.ok(files.includes('report.html') && files.includes('summary.md'));
    const summary = readFileSync(join(dir, 'summary.md'), 'utf8');
    assert.match(summary, /final confirmation/i);
    assert.match(summary, /threads-claim/);
  });
});

describe('damaged and foreign files', () => {
  it('run.json that is not JSON: the file, the line and what to do', () => {
    const dir = copyOf(FORMAT_V1);
    const text = readFileSync(join(dir, 'run.json'), 'utf8').split('\n');
    text[4] = `${text[4]} oops`;
    writeFileSync(join(dir, 'run.json'), text.join('\n'));
    assert.throws(
      () => readRunJson(dir, 'the report cannot be written'),
      (e: unknown) =>
        e instanceof ConfigError &&
        new RegExp(
          `^${join(dir, 'run.json')}:5: run\\.json is damaged: not valid JSON .*the report cannot be written$`,
        ).test(e.message),
    );
  });

  it('run.json of another shape names the field and its line', () => {
    const dir = copyOf(FORMAT_V1);
    const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    run.result.stages[1].kind = 'grid-search';
    const text = JSON.stringify(run, null, 2);
    writeFileSync(join(dir, 'run.json'), text);
    const line = text.split('\n').findIndex((l) => l.includes('"grid-search"')) + 1;
    assert.throws(
      () => readRunJson(dir, 'x'),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.startsWith(
          `${join(dir, 'run.json')}:${line}: ` +
            'run.json does not have the shape tunebench writes at field "result.stages[1].kind"',
        ),
    );
    run.result.stages[1].kind = 'sweep';
    run.result.stages[0].result.max = 'big';
    writeFileSync(join(dir, 'run.json'), JSON.stringify(run, null, 2));
    assert.throws(
      () => readRunJson(dir, 'x'),
      /at field "result\.stages\[0\]\.result\.max": expected number, received string/,
    );
  });

  it('a journal line that is JSON but not a trial record is set aside with its field', () => {
    const dir = copyOf(FORMAT_V1);
    const lines = readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n');
    const record = JSON.parse(lines[3]!);
    record.outcome = 'exploded';
    lines[3] = JSON.stringify(record);
    writeFileSync(join(dir, 'trials.jsonl'), `${lines.join('\n')}\n`);
    const read = readJournal(join(dir, 'trials.jsonl'));
    assert.deepEqual(read.badLines, [4]);
    assert.equal(read.records.length, 73);
    assert.match(
      read.problems[0]!,
      new RegExp(
        `^${join(dir, 'trials.jsonl')}:4: a trial record does not have the shape tunebench writes at field "outcome"`,
      ),
    );
    const { warnings } = readRunDir(dir);
    assert.ok(
      warnings.some((w) => w.includes('lines 4 are not trial records') && w.includes('field "outcome"')),
      warnings.join('\n'),
    );
  });

  it('baseline.json and the confirmations of another shape are refused with file, line and field', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'baseline.json'), '{\n  "run_id": "r1",\n  "set_at": 5,\n  "env_key": "k"\n}\n');
    assert.throws(
      () => readBaseline(dir),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.message.startsWith(
          `${join(dir, 'baseline.json')}:3: baseline.json does not have the shape tunebench writes at field "set_at"`,
        ),
    );
    writeFileSync(
      join(dir, 'confirmations.json'),
      JSON.stringify({ confirmations: [{ run_id: 'r', metric: 'm', value: -1 }] }),
    );
    assert.throws(
      () => readConfirmations(dir),
      /confirmations file does not have the shape tunebench writes at field "confirmations\[0\]/,
    );
  });

  it('a foreign history index cache is rebuilt, not trusted', async () => {
    const reports = tempDir();
    cpSync(FORMAT_V1, join(reports, 'format-v1', 'run-a'), { recursive: true });
    const first = await indexRuns(reports);
    assert.equal(first.runs.length, 1);
    const cacheFile = readdirSync(reports).find((f) => f.endsWith('.json'));
    assert.ok(cacheFile, 'the index wrote its cache');
    // The run.json's own size and time: the cache entry is a hit, so only its shape can send it back.
    const dir = join(reports, 'format-v1', 'run-a');
    const st = statSync(join(dir, 'run.json'));
    const jt = statSync(join(dir, 'trials.jsonl'));
    const { version } = JSON.parse(readFileSync(join(reports, cacheFile), 'utf8')) as { version: number };
    const cacheWith = (entry: unknown) =>
      writeFileSync(
        join(reports, cacheFile),
        JSON.stringify({
          version,
          entries: {
            [dir]: { size: st.size, mtime: st.mtimeMs, journal: { size: jt.size, mtime: jt.mtimeMs }, entry },
          },
        }),
      );
    // Control: a well-formed entry with matching size and time is trusted as it is.
    cacheWith({ ...first.runs[0]!, env_label: 'from the cache' });
    assert.equal((await indexRuns(reports)).runs[0]!.env_label, 'from the cache');
    cacheWith({ run_id: 7 });
    const again = await indexRuns(reports);
    assert.equal(again.runs.length, 1);
    assert.equal(again.runs[0]!.run_id, first.runs[0]!.run_id);
    // The figures come from the journal: a cache entry for another journal (its size or time) is read again.
    cacheWith({ ...first.runs[0]!, env_label: 'from the cache' });
    appendFileSync(join(dir, 'trials.jsonl'), '');
    utimesSync(join(dir, 'trials.jsonl'), new Date(), new Date(Date.now() + 5000));
    assert.notEqual((await indexRuns(reports)).runs[0]!.env_label, 'from the cache');
  });
});
