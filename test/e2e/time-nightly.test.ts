// `tunebench time` in a nightly job: a history of `time` runs whose latest night is slower is flagged by
// `history`, and the confirmation re-runs the `time` run from its run.json (a one-liner has no
// experiment file), each command its own, in the folder `time` was started in; its throughput is
// named runs/s, with the time of a run, never samples/s.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { plantedNights, writeNights } from '../support/history.js';
import { CLI, tempDir } from '../support/paths.js';

/** The second command reads its sleep from the file `d` of the folder `time` runs in (a relative path). */
const COMMANDS = ['sleep 0.01', 'sleep $(cat d)'];
const timeRun = (cwd: string, out: string) =>
  execa(
    process.execPath,
    [CLI, 'time', '--quiet', '--runs', '3', '--name', 'nightly', '--out', out, '--shell', 'sh', ...COMMANDS],
    {
      cwd,
      reject: false,
    },
  );

interface Metric {
  name: string;
  unit: string;
  failing: boolean;
  alarm_direction: string | null;
  confirmation: { value: number | null; trials: number; error: string | null } | null;
}

describe('tunebench time in a nightly history', { timeout: 3 * 60_000 }, () => {
  it('confirms a flagged time run by re-running its commands, and shows runs/s', async () => {
    const work = tempDir();
    writeFileSync(join(work, 'd'), '0.02');
    const first = tempDir();
    const base = await timeRun(work, first);
    assert.equal(base.exitCode, 0, base.stderr);
    const baseDir = join(first, 'nightly', readdirSync(join(first, 'nightly'))[0]!);
    const reports = tempDir();
    writeNights(
      reports,
      plantedNights(11, { at: 99, step: 1, noise: 0.01, seed: 12 }),
      Date.now() - 12 * 86_400_000,
      baseDir,
    );
    // Tonight the second command is five times slower, and stays so while history confirms.
    writeFileSync(join(work, 'd'), '0.1');
    const slow = await timeRun(work, reports);
    assert.equal(slow.exitCode, 0, slow.stderr);

    // history starts elsewhere: the commands still run in the folder time was started in.
    const r = await execa(
      process.execPath,
      [CLI, 'history', reports, '--fail-on-regression', '10', '--quiet', '--json'],
      {
        cwd: tmpdir(),
        reject: false,
      },
    );
    assert.equal(r.exitCode, 3, r.stderr);
    const gate = (JSON.parse(r.stdout) as { experiments: { gate: { series: { metrics: Metric[] } } }[] })
      .experiments[0]!.gate;
    const metrics = gate.series.metrics;
    assert.deepEqual(
      metrics.map((m) => [m.name, m.unit]),
      COMMANDS.map((c) => [`time runs/s command=${c}`, 'runs/s']),
    );
    const slower = metrics.find((m) => m.name.endsWith('$(cat d)'))!;
    assert.equal(slower.alarm_direction, 'regression');
    assert.ok(slower.failing, JSON.stringify(slower));
    const c = slower.confirmation!;
    assert.equal(c.error, null);
    // Re-measured on the slow command itself (at least 0.1 s a run), not on the first command.
    assert.ok(c.value !== null && c.value <= 10 && c.trials >= 5, JSON.stringify(c));
    assert.equal(metrics.find((m) => m.name.endsWith('0.01'))!.failing, false);

    const text = await execa(process.execPath, [CLI, 'history', reports, '--fail-on-regression', '10'], {
      reject: false,
    });
    assert.equal(text.exitCode, 3, text.stderr);
    assert.match(text.stdout, /REGRESSION: time runs\/s command=sleep \$\(cat d\) is -\d+\.\d% .*; confirmed: -\d+/);
    assert.doesNotMatch(text.stdout, /samples\/s|is gone/);
    const md = readFileSync(join(reports, 'history', 'nightly', 'history.md'), 'utf8');
    assert.match(
      md,
      /\| time runs\/s command=sleep \$\(cat d\) \| [\d.]+ \\\[[\d.]+, [\d.]+\\\] runs\/s \(\d+ ms a run\) \|/,
    );
    assert.doesNotMatch(md, /samples\/s/);
  });
});
