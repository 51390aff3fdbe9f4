// Two runs of one experiment on one machine, one of them under load, write the same batch or one
// multiple apart (issue 44). The workload's memory is exact (simulated-gpu.mjs: 408 runs, 416 fails) and
// each step burns CPU time, so the load only stretches time: with timeouts read as memory failures, or a
// static timeout under runs until memory flattens, the loaded run would write a lower batch.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, tempDir } from '../support/paths.js';
import { simulatedGpuHead } from '../support/simulated-gpu.js';
import { notesText } from '../support/notes.js';
import type { StageNote } from '../../harness/domain/index.js';

function experiment(dir: string): string {
  const file = join(dir, 'load.yaml');
  writeFileSync(
    file,
    `${simulatedGpuHead('load', ['--hold-ms=1', '--busy-ms=120'], '3s')}  - kind: max-batch
    multiple_of: 8
    start: 256
    ceiling: 4096
    steps: 2
    throughput_points: 0
    place_by: count
    repeat_boundary: 1
    choose: max
`,
  );
  return file;
}

async function maxOf(file: string, out: string): Promise<{ max: number; notes: StageNote[]; seconds: number }> {
  const t0 = Date.now();
  const r = await execa(process.execPath, [CLI, 'run', file, '--out', out, '--json'], { reject: false });
  assert.equal(r.exitCode, 0, r.stderr.slice(-2000));
  const stage = (JSON.parse(r.stdout) as { stages: { notes: StageNote[]; result: { max: number } }[] }).stages[0]!;
  return { max: stage.result.max, notes: stage.notes, seconds: (Date.now() - t0) / 1000 };
}

/** Processes that keep every core of this machine busy (one per core, plus one). */
function load(cores: number): ChildProcess[] {
  return Array.from({ length: cores + 1 }, () =>
    spawn(process.execPath, ['-e', 'let x = 0; for (;;) x = Math.sqrt(x + 1);'], { stdio: 'ignore' }),
  );
}

describe('two runs of the same experiment, one under load', () => {
  it('write the same max batch, or one multiple apart', { timeout: 300_000 }, async () => {
    const dir = tempDir('tunebench-load-');
    const file = experiment(dir);
    try {
      const quiet = await maxOf(file, join(dir, 'quiet'));
      const hogs = load(2);
      let busy: Awaited<ReturnType<typeof maxOf>>;
      try {
        busy = await maxOf(file, join(dir, 'busy'));
      } finally {
        for (const h of hogs) h.kill('SIGKILL');
      }
      const why = `quiet ${quiet.max} in ${quiet.seconds} s, loaded ${busy.max} in ${busy.seconds} s\n${notesText(busy.notes)}`;
      assert.ok(Math.abs(quiet.max - busy.max) <= 8, why);
      // Memory decides both: the exact max is 408, and no run of either was lowered by time.
      for (const m of [quiet.max, busy.max]) assert.ok(m === 408 || m === 400, why);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
