// Reading a finished run directory in end-to-end tests.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TrialRecord } from '../../harness/trial/record.js';

/** The single run directory under <out>/<experiment>/. */
export function runDir(out: string, name: string): string {
  const runs = readdirSync(join(out, name));
  assert.equal(runs.length, 1);
  return join(out, name, runs[0]!);
}

export function journal(dir: string): TrialRecord[] {
  return readFileSync(join(dir, 'trials.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as TrialRecord);
}

/** The acceptance check: max ran ok in every record, and max + multiple_of is recorded as oom. */
export function assertExactMax(records: TrialRecord[], max: number, m: number): void {
  const at = (b: number) => records.filter((r) => r.config['batch_size'] === b);
  assert.ok(at(max).length > 0 && at(max).every((r) => r.outcome === 'ok'), `max ${max} recorded ok`);
  assert.ok(at(max + m).some((r) => r.outcome === 'oom'), `max + ${m} recorded oom`);
}
