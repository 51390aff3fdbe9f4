// The files the SLURM executor reads back (batch.json, a task's result, a stage's job.json) go
// through their schema: a damaged or foreign-shaped file gets a message naming the file, the line
// and the field, and the consequence each file calls for: a task result counts as a failed task,
// a batch or a stage job stops the run with what to do.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { trialRecordSchema } from '../../../harness/domain/index.js';
import { StoreError } from '../../../harness/errors.js';
import {
  givenUpRecord,
  readBatch,
  readTaskResult,
  taskResultPath,
  writeBatch,
  type BatchFile,
} from '../../../harness/executors/slurm/batch.js';
import { readStageJob, stageJobPath, writeStageJob } from '../../../harness/executors/slurm/stage-job.js';
import { tempDir } from '../../support/paths.js';

const spec = {
  stage: 'loader',
  role: { kind: 'grid' as const },
  config: { num_workers: 2, device: 'cuda' },
  measure: { warmupSteps: 1, steps: 3 },
  argv: ['node', 'train.mjs'],
};
const batch: BatchFile = {
  first: 4,
  specs: [
    spec,
    { ...spec, config: { num_workers: 4, device: 'cuda' }, measure: { warmupSteps: 1, steps: 3, epochs: 2 } },
  ],
  submissions: [{ job_id: '12', tasks: [0, 1], offset: 0, at: '2025-01-01T00:00:00.000Z' }],
  attempts: { '0': 1, '1': 1 },
  given_up: {},
};

/** Pretty JSON, as tunebench writes it, with one value replaced. */
const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function throwsStore(f: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(f, (error: unknown) => {
    assert.ok(error instanceof StoreError, String(error));
    for (const p of patterns) assert.match(error.message, p);
    return true;
  });
}

describe('batch.json', () => {
  it('reads back what was written, and null where there is none', () => {
    const dir = join(tempDir(), 'b4');
    assert.equal(readBatch(dir), null);
    writeBatch(dir, batch);
    assert.deepEqual(readBatch(dir), batch);
  });

  it('a damaged file stops the run: the file, the line, and removing the folder to submit again', () => {
    const dir = join(tempDir(), 'b4');
    writeBatch(dir, batch);
    const path = join(dir, 'batch.json');
    writeFileSync(path, pretty(batch).replace('"offset": 0', '"offset": 0,,'));
    const line =
      pretty(batch)
        .split('\n')
        .findIndex((l) => l.includes('"offset"')) + 1;
    throwsStore(
      () => readBatch(dir),
      new RegExp(`^${path}:${line}: the batch file of a SLURM batch is damaged: not valid JSON`),
      new RegExp(`remove the folder ${dir} to submit the batch again`),
    );
  });

  it('a foreign-shaped file stops the run the same way, naming the field', () => {
    const dir = join(tempDir(), 'b4');
    writeBatch(dir, batch);
    const path = join(dir, 'batch.json');
    const text = pretty({ ...batch, submissions: [{ ...batch.submissions[0], job_id: 12 }] });
    writeFileSync(path, text);
    const line = text.split('\n').findIndex((l) => l.includes('"job_id"')) + 1;
    throwsStore(
      () => readBatch(dir),
      new RegExp(
        `^${path}:${line}: the batch file of a SLURM batch does not have the shape ` +
          `tunebench writes at field "submissions\\[0\\]\\.job_id": expected string`,
      ),
      /remove the folder/,
    );
    writeFileSync(path, pretty({ ...batch, specs: [{ ...spec, measure: { steps: 3 } }] }));
    throwsStore(() => readBatch(dir), /at field "specs\[0\]\.measure\.warmupSteps"/);
    writeFileSync(path, pretty(['not', 'a', 'batch']));
    throwsStore(() => readBatch(dir), new RegExp(`^${path}:1: .*expected object`));
  });
});

describe('a task result file', () => {
  const record = {
    ...givenUpRecord(spec, 5, 'it ran'),
    outcome: 'ok' as const,
    node: { host: 'n1', device: 'CPU: x', slurm_job: '12_1' },
  };

  it('reads back the record the task wrote, and nothing while there is none', () => {
    const dir = tempDir();
    assert.deepEqual(readTaskResult(dir, 1), { kind: 'none' });
    writeFileSync(taskResultPath(dir, 1), pretty(record));
    assert.deepEqual(readTaskResult(dir, 1), { kind: 'record', record: trialRecordSchema.parse(record) });
  });

  it(
    'a damaged file is a failed task, not a crash of the run: ' + 'the file and the line, and what happens to the task',
    () => {
      const dir = tempDir();
      const path = taskResultPath(dir, 1);
      const text = pretty(record);
      writeFileSync(path, text.slice(0, text.indexOf('"telemetry"') + 15));
      const r = readTaskResult(dir, 1);
      assert.equal(r.kind, 'damaged');
      assert.match(
        r.kind === 'damaged' ? r.problem : '',
        new RegExp(
          `^${path}:\\d+: the result file of a SLURM array task is damaged: not valid JSON ` +
            '.*the task counts as failed: it is submitted again while retries allow, else recorded as a crash$',
        ),
      );
    },
  );

  it('a foreign-shaped file counts the same as a damaged one, naming the line and the field', () => {
    const dir = tempDir();
    const path = taskResultPath(dir, 1);
    const text = pretty({ ...record, outcome: 'exploded' });
    writeFileSync(path, text);
    const line = text.split('\n').findIndex((l) => l.includes('"outcome"')) + 1;
    const r = readTaskResult(dir, 1);
    assert.equal(r.kind, 'damaged');
    assert.match(
      r.kind === 'damaged' ? r.problem : '',
      new RegExp(
        `^${path}:${line}: the result file of a SLURM array task does not have ` +
          'the shape tunebench writes at field "outcome": .*the task counts as failed',
      ),
    );
    writeFileSync(path, pretty({ job: 12, result: 'ok' }));
    const other = readTaskResult(dir, 1);
    assert.match(other.kind === 'damaged' ? other.problem : '', new RegExp(`^${path}:\\d+: .* at field "v"`));
  });

  it('a result path that cannot be read (a folder) is a failed task too', () => {
    const dir = tempDir();
    mkdirSync(taskResultPath(dir, 1));
    const r = readTaskResult(dir, 1);
    assert.equal(r.kind, 'damaged');
    assert.match(
      r.kind === 'damaged' ? r.problem : '',
      /task-1\.json: cannot be read \(.*EISDIR.*\); the task counts as failed/,
    );
  });
});

describe("a stage allocation's job.json", () => {
  it('reads back the job written, and null before the first submission', () => {
    const dir = tempDir();
    assert.equal(readStageJob(dir), null);
    writeStageJob(dir, { job_id: '31', attempts: 2 });
    assert.deepEqual(readStageJob(dir), { job_id: '31', attempts: 2 });
  });

  it('a damaged file stops the run (its job may still run), with the file, the line and what to do', () => {
    const dir = tempDir();
    const path = stageJobPath(dir);
    writeFileSync(path, '{\n  "job_id": "31",\n  "attempts": 2\n');
    throwsStore(
      () => readStageJob(dir),
      new RegExp(`^${path}:\\d+: the job file of a SLURM stage allocation is damaged: not valid JSON`),
      new RegExp(
        `cancel the stage's SLURM job if squeue still lists it, then remove ${path} to submit the stage again`,
      ),
    );
  });

  it('a foreign-shaped file stops the run the same way, naming the field', () => {
    const dir = tempDir();
    const path = stageJobPath(dir);
    writeFileSync(path, pretty({ job_id: '31', attempts: 0 }));
    throwsStore(
      () => readStageJob(dir),
      new RegExp(
        `^${path}:3: the job file of a SLURM stage allocation ` +
          'does not have the shape tunebench writes at field "attempts"',
      ),
      /remove .*job\.json/,
    );
    writeFileSync(path, pretty({ job: 31 }));
    throwsStore(() => readStageJob(dir), new RegExp(`^${path}:1: .* at field "job_id"`));
  });
});
