// The nightly series gate of `tunebench history` end to end: recorded histories (copies of a real run,
// scaled per night) with a planted regression and stationary noise, the reference that never absorbs
// a regression (held nights, persistence, `tunebench baseline accept`), and the confirmation that
// re-runs a flagged config on the deterministic simulated GPU before failing.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { NIGHTLY_EXPERIMENT, plantedNights, writeNights } from '../support/history.js';
import { CLI, tempDir } from '../support/paths.js';

const cli = (args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [CLI, ...args], { reject: false, env: { SIMULATED_GPU_SLOWDOWN: '1', ...env } });

interface GatedMetric {
  name: string;
  status: string;
  alarm_direction: string | null;
  failing: boolean;
  pending: boolean;
  held: string[];
  test: { ratio: number; reference_to: string | null } | null;
  confirmation: {
    value: number | null;
    trials: number;
    run_dir: string | null;
    same_config: boolean;
    error: string | null;
  } | null;
  changes: { run_id: string; how: string; direction: string }[];
}
interface Gate {
  decided_by: 'series' | 'baseline';
  failing: string[];
  series: { warm_up: boolean; nights: number; per_test_alpha: number | null; metrics: GatedMetric[] };
}
const gateOf = (stdout: string) => (JSON.parse(stdout) as { experiments: { gate: Gate }[] }).experiments[0]!.gate;

describe('the nightly series gate', { timeout: 6 * 60_000 }, () => {
  it(
    'replays recorded histories: a planted 10% regression fails with exit 3, ' + 'noisy stationary histories pass',
    async () => {
      const planted = tempDir();
      // 30 nights, +/-4% noise a night, 10% slower from night 27 on.
      writeNights(planted, plantedNights(30, { at: 26, step: 0.9, noise: 0.04, seed: 141 }));
      const r = await cli(['history', planted, '--fail-on-regression', '5', '--no-confirm', '--json']);
      assert.equal(r.exitCode, 3, r.stderr);
      const g = gateOf(r.stdout);
      assert.equal(g.decided_by, 'series');
      const throughput = g.series.metrics.filter((m) => m.name.includes('samples/s'));
      assert.ok(throughput.length >= 4);
      for (const m of throughput) {
        assert.ok(m.failing, `${m.name}: ${JSON.stringify(m)}`);
        // The reference ends before the step, and the estimate is near the planted -10%.
        assert.ok(
          m.test && Number(m.test.reference_to!.slice(6)) < 27 && m.test.ratio > 0.85 && m.test.ratio < 0.95,
          JSON.stringify(m.test),
        );
        // The regressed nights before tonight are held out of the reference.
        assert.deepEqual(m.held, ['night-0027', 'night-0028', 'night-0029', 'night-0030'].slice(-m.held.length));
      }
      const text = await cli(['history', planted, '--fail-on-regression', '5', '--no-confirm']);
      assert.match(
        text.stdout,
        /REGRESSION: threads samples\/s \(chosen config\) is -\d+\.\d% vs the reference of \d+ night\(s\) night-0001 to night-00\d\d \(the last \d nights?, p = .* <= .*\) \(beyond 5%\); not re-measured/,
      );

      // Stationary histories with more noise than the step itself, several seeds: no exit 3, no alarm.
      for (const seed of [1, 2, 3, 4]) {
        const quiet = tempDir();
        writeNights(quiet, plantedNights(30, { at: 99, step: 1, noise: 0.08, seed }));
        const q = await cli(['history', quiet, '--fail-on-regression', '5', '--no-confirm', '--json']);
        assert.equal(q.exitCode, 0, `seed ${seed}: ${q.stderr}`);
        const qg = gateOf(q.stdout);
        assert.equal(qg.decided_by, 'series');
        assert.deepEqual(qg.failing, []);
      }
    },
  );

  it(
    'never absorbs a regression: ' + 'flagged nights stay out of the reference until accepted or persisting 5 nights',
    async () => {
      const out = tempDir();
      const dirs = writeNights(out, plantedNights(24, { at: 20, step: 0.88, noise: 0.02, seed: 7 }));
      const before = await cli(['history', out, '--fail-on-regression', '5', '--no-confirm', '--json']);
      assert.equal(before.exitCode, 3, before.stderr);
      // Accepting tonight makes it the start of a new level: the same history passes.
      const accept = await cli(['baseline', 'accept', dirs.at(-1)!]);
      assert.equal(accept.exitCode, 0, accept.stderr);
      assert.match(accept.stdout, /night-0024 accepted as a new level/);
      assert.match(
        (await cli(['baseline', 'show', join(out, 'report-fixture')])).stdout,
        /accepted as new levels: night-0024/,
      );
      const after = await cli(['history', out, '--fail-on-regression', '5', '--no-confirm', '--json']);
      assert.equal(after.exitCode, 0, after.stderr);
      const m = gateOf(after.stdout).series.metrics.find((x) => x.name.startsWith('threads'))!;
      assert.equal(m.status, 'acknowledged');
      assert.deepEqual(
        m.changes.map((c) => [c.run_id, c.how, c.direction]),
        [['night-0021', 'acknowledged', 'regression']],
      );
      const text = await cli(['history', out, '--fail-on-regression', '5', '--no-confirm']);
      assert.match(
        text.stdout,
        /level change: threads samples\/s \(chosen config\) -1\d\.\d% \(regression\) from run night-0021, accepted by tunebench baseline accept/,
      );

      // Without the acceptance, the change becomes the reference only after 5 flagged nights in a row,
      // and every one of those nights fails.
      for (const [nights, exit] of [
        [24, 3],
        [25, 3],
        [28, 0],
      ] as const) {
        const cut = tempDir();
        writeNights(cut, plantedNights(nights, { at: 20, step: 0.88, noise: 0.02, seed: 7 }));
        const r = await cli(['history', cut, '--fail-on-regression', '5', '--no-confirm', '--json']);
        assert.equal(r.exitCode, exit, `${nights} nights: ${r.stderr}`);
        const t = gateOf(r.stdout).series.metrics.find((x) => x.name.startsWith('threads'))!;
        if (nights === 25) assert.equal(t.status, 'persisted');
        if (nights === 28)
          assert.deepEqual(
            t.changes.map((c) => [c.run_id, c.how]),
            [['night-0021', 'persisted']],
          );
      }
    },
  );

  it(
    'confirms an alarm by re-running the flagged configs: ' +
      'a one-night slowdown is not confirmed (exit 0), a lasting one is (exit 3)',
    async () => {
      // One real run of the deterministic simulated GPU, eleven earlier nights copied from it with +/-1% noise.
      const first = tempDir();
      const base = await cli(['run', NIGHTLY_EXPERIMENT, '--out', first, '--quiet']);
      assert.equal(base.exitCode, 0, base.stderr);
      const baseDir = join(first, 'nightly', readdirSync(join(first, 'nightly'))[0]!);
      const reports = tempDir();
      writeNights(
        reports,
        plantedNights(11, { at: 99, step: 1, noise: 0.01, seed: 12 }),
        Date.now() - 12 * 86_400_000,
        baseDir,
      );
      // Tonight the machine is 30% slower, for this run only.
      const slow = await cli(['run', NIGHTLY_EXPERIMENT, '--out', reports, '--quiet'], {
        SIMULATED_GPU_SLOWDOWN: '1.3',
      });
      assert.equal(slow.exitCode, 0, slow.stderr);
      const r = await cli(['history', reports, '--fail-on-regression', '10', '--quiet', '--json']);
      assert.equal(r.exitCode, 0, r.stderr);
      const g = gateOf(r.stdout);
      assert.equal(g.decided_by, 'series');
      const alarmed = g.series.metrics.filter((m) => m.alarm_direction === 'regression');
      assert.ok(alarmed.length >= 3, JSON.stringify(g.series.metrics));
      for (const m of alarmed) {
        assert.ok(
          m.confirmation && m.confirmation.value !== null && m.confirmation.trials >= 10,
          JSON.stringify(m.confirmation),
        );
        assert.equal(m.failing, false);
        assert.equal(m.status, 'accepted');
        assert.ok(m.test && Math.abs(m.test.ratio - 1) < 0.05, JSON.stringify(m.test));
        assert.ok(existsSync(join(m.confirmation.run_dir!, 'report.html')), m.confirmation.run_dir!);
      }
      const recorded = JSON.parse(readFileSync(join(reports, 'nightly', 'confirmations.json'), 'utf8')) as {
        confirmations: unknown[];
      };
      assert.equal(recorded.confirmations.length, alarmed.length);
      // The confirmation is recorded: the next history decides from it without running trials again.
      const again = await cli(['history', reports, '--fail-on-regression', '10']);
      assert.equal(again.exitCode, 0, again.stderr);
      assert.match(
        again.stdout,
        /alarm not confirmed: .* measured -2\d\.\d% vs the reference .* re-measured over \d+ trials/,
      );
      assert.equal(readdirSync(join(reports, 'history', 'nightly', 'confirm', 'nightly')).length, 1);

      // The next night is slow too, and so is the machine while history confirms: exit 3, confirmed.
      const slower = await cli(['run', NIGHTLY_EXPERIMENT, '--out', reports, '--quiet'], {
        SIMULATED_GPU_SLOWDOWN: '1.3',
      });
      assert.equal(slower.exitCode, 0, slower.stderr);
      const bad = await cli(['history', reports, '--fail-on-regression', '10', '--quiet'], {
        SIMULATED_GPU_SLOWDOWN: '1.3',
      });
      assert.equal(bad.exitCode, 3, bad.stderr);
      assert.match(
        bad.stdout,
        /REGRESSION: .* is -2\d\.\d% vs the reference of \d+ night\(s\) .*; confirmed: -2\d\.\d% after the re-measurement; re-measured over \d+ trials/,
      );
      assert.match(bad.stderr, /regression beyond 10% in nightly/);
    },
  );
});
