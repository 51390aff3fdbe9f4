// Reading a finished run directory in end-to-end tests.
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, tempDir } from './paths.js';
import type { MaxBatchSummary, TrialRecord } from '../../harness/domain/index.js';
import type { StageKind, StageOutcome, StageResults } from '../../harness/experiment/schema.js';

/** A finished run of every stage kind (test/fixtures/experiments/report-fixture.yaml): a known journal. */
export const REPORT_FIXTURE = join(FIXTURES, 'runs', 'report-fixture');

/** The single run directory under <out>/<experiment>/. */
export function runDir(out: string, name: string): string {
  const runs = readdirSync(join(out, name));
  assert.equal(runs.length, 1);
  return join(out, name, runs[0]!);
}

export function journal(dir: string): TrialRecord[] {
  return readFileSync(join(dir, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TrialRecord);
}

/** The acceptance check: max ran ok in every record, and max + multiple_of is recorded as oom. */
export function assertExactMax(records: TrialRecord[], max: number, m: number): void {
  const at = (b: number) => records.filter((r) => r.config['batch_size'] === b);
  assert.ok(at(max).length > 0 && at(max).every((r) => r.outcome === 'ok'), `max ${max} recorded ok`);
  assert.ok(
    at(max + m).some((r) => r.outcome === 'oom'),
    `max + ${m} recorded oom`,
  );
}

/**
 * The max a stage wrote, by its rule: without the band model (repeat_boundary 0, or no run failed) the exact
 * max; with it, a batch that passed every one of its runs (at least repeat_boundary of them), below a batch
 * recorded as an OOM, whose chance of failing a run the model puts within max_risk.
 */
export function assertMaxWritten(records: TrialRecord[], stage: string, r: MaxBatchSummary): void {
  assert.ok(r.max !== null, 'a max was written');
  const model = r.band?.model;
  if (!model) return assertExactMax(records, r.max, r.multiple_of);
  const at = (b: number) => records.filter((x) => x.stage === stage && x.config[r.param] === b);
  assert.ok(
    at(r.max).length >= r.band!.repeats && at(r.max).every((x) => x.outcome === 'ok'),
    `max ${r.max}: every run ok`,
  );
  assert.equal(r.band!.passed_all, r.max);
  assert.ok(r.smallestFail !== null && r.smallestFail > r.max, `smallest failure ${r.smallestFail} above max ${r.max}`);
  assert.ok(
    at(r.smallestFail).some((x) => x.outcome === 'oom'),
    `${r.smallestFail} recorded oom`,
  );
  assert.ok(model.risk <= model.max_risk, `the band model's risk ${model.risk} within max_risk ${model.max_risk}`);
}

/** A copy of the fixture run whose `arena` stage steps take `factor` times as long, on another CPU. */
export function slowerCopy(factor: number, cpuModel?: string): string {
  const dir = join(tempDir(), 'after');
  cpSync(REPORT_FIXTURE, dir, { recursive: true });
  const lines = readFileSync(join(dir, 'trials.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TrialRecord);
  for (const r of lines) if (r.stage === 'arena') r.steps = r.steps.map((s) => ({ ...s, seconds: s.seconds * factor }));
  writeFileSync(join(dir, 'trials.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
    run_id: string;
    environment: { cpu: { model: string } };
  };
  run.run_id = 'after-run';
  if (cpuModel) run.environment.cpu.model = cpuModel;
  writeFileSync(join(dir, 'run.json'), JSON.stringify(run));
  return dir;
}

/** The result of `stage`, which must be of `kind`: fails the test otherwise. */
export function resultOf(stage: StageOutcome | undefined, kind: 'max-batch'): StageResults['max-batch'];
export function resultOf(stage: StageOutcome | undefined, kind: 'sweep'): StageResults['sweep'];
export function resultOf(stage: StageOutcome | undefined, kind: 'compare'): StageResults['compare'];
export function resultOf(stage: StageOutcome | undefined, kind: 'claim'): StageResults['claim'];
export function resultOf(stage: StageOutcome | undefined, kind: StageKind): StageOutcome['result'] {
  assert.ok(stage, `a ${kind} stage`);
  assert.equal(stage.kind, kind, `stage ${stage.name} is a ${stage.kind} stage, expected ${kind}`);
  return stage.result;
}
