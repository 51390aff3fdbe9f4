// An in-process bracket on the CPU under a memory cgroup: the kernel ends the session at the attempt
// that outgrew the cap (an OOM hint), and fresh runs then decide the exact max (bracket: in-process).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { PYTHON, requireSystem } from '../support/system.js';
import type { TrialRecord } from '../../harness/domain/index.js';

describe('an in-process bracket on the CPU', () => {
  it(
    'takes the session killed by the cgroup for an OOM hint, and decides the max in fresh runs',
    { skip: requireSystem('cgroup') },
    () => {
      const dir = tempDir('tunebench-bracket-cpu-');
      const file = join(dir, 'b.yaml');
      writeFileSync(
        file,
        `name: bracket-cpu
workload:
  kind: command
  python: ${PYTHON}
  command: [${join(PROGRAMS, 'bytes_per_sample.py')}]
  protocol: required
  warm_start: fork
limits: { memory: 400MiB, mechanism: cgroup, timeout: 30s }
measure: { warmup_steps: 1, steps: 1 }
stages:
  - kind: max-batch
    multiple_of: 8
    start: 16
    steps: 1
    confirm_steps: 2
    repeat_boundary: 0
    throughput_points: 0
    choose: max
    bracket: in-process
`,
      );
      const p = spawnSync(process.execPath, [CLI, 'run', file, '--out', join(dir, 'runs'), '--json'], {
        encoding: 'utf8',
      });
      assert.equal(p.status, 0, p.stderr);
      const out = JSON.parse(p.stdout) as {
        run_dir: string;
        stages: { result: { status: string; max: number; smallestFail: number; confirmed: boolean; log: string[] } }[];
      };
      const r = out.stages[0]!.result;
      assert.equal(r.status, 'exact');
      assert.equal(r.smallestFail, r.max + 8);
      assert.equal(r.confirmed, true);
      // 1 MiB a sample under 400 MiB: the interpreter takes its share, the rest is the batch.
      assert.ok(r.max >= 256 && r.max < 400, `max ${r.max}`);
      const trials = readFileSync(join(out.run_dir, 'trials.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as TrialRecord);
      const session = trials[0]!;
      assert.equal(session.role.kind, 'bracket');
      const last = session.attempts!.at(-1)!;
      assert.equal(last.outcome, 'oom', 'the attempt the kernel ended is an OOM hint');
      assert.equal(session.config['batch_size'], last.batch, "the session's OOM is recorded at that attempt's batch");
      assert.ok(session.attempts!.slice(0, -1).every((a) => a.outcome === 'ok'));
      // On a host cap a run until memory flattens is a fresh process, never a fork of the warm server.
      const confirms = trials.filter((t) => t.role.kind === 'confirm');
      assert.ok(confirms.length > 0 && confirms.every((t) => t.launch === undefined), 'confirmations run fresh');
      assert.ok(confirms.some((t) => t.config['batch_size'] === r.max && t.outcome === 'ok'));
    },
  );
});
