// The nightly recipe (experiments/nightly/nightly.sh) end to end on the deterministic simulated GPU:
// quiet nights pass, a planted slowdown fails loudly with exit 3, and a night stopped by SIGTERM is
// resumed by the next night's job instead of starting over.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { NIGHTLY_EXPERIMENT } from '../support/history.js';
import { ROOT, tempDir } from '../support/paths.js';
import { waitFor } from '../support/wait.js';

const SCRIPT = join(ROOT, 'experiments', 'nightly', 'nightly.sh');

describe('the nightly recipe', { timeout: 5 * 60_000 }, () => {
  it(
    'passes quiet nights, resumes a night stopped by SIGTERM, ' +
      'and exits 3 with REGRESSION on a planted 30% slowdown',
    async () => {
      const reports = tempDir();
      const summary = join(tempDir(), 'summary.md');
      const night = (extra: Record<string, string> = {}) =>
        execa(SCRIPT, [], {
          reject: false,
          env: {
            EXPERIMENT: NIGHTLY_EXPERIMENT,
            REPORTS: reports,
            THRESHOLD: '10',
            GITHUB_STEP_SUMMARY: summary,
            ...extra,
          },
        });
      const first = await night();
      assert.equal(first.exitCode, 0, first.stderr);
      assert.match(first.stdout, /no baseline: this is the first finished run in its environment/);

      // The second night is stopped by SIGTERM mid-run (as SLURM preemption does); the script passes the
      // signal on, tunebench writes a partial report and the script exits 130.
      const second = night();
      const runs = join(reports, 'nightly');
      // Stop it once the second run has journaled a few trials.
      await waitFor('the second night under way', () => {
        const id = readdirSync(runs).sort()[1];
        return id && readFileSync(join(runs, id, 'trials.jsonl'), 'utf8').split('\n').length > 4 ? id : null;
      });
      second.kill('SIGTERM');
      const stopped = await second;
      assert.equal(stopped.exitCode, 130, stopped.stderr);
      const stoppedDir = join(runs, readdirSync(runs).sort()[1]!);
      assert.equal(
        (JSON.parse(readFileSync(join(stoppedDir, 'run.json'), 'utf8')) as { status: string }).status,
        'stopped',
      );

      // The next night resumes that run (no third run directory) and compares it with the first: same
      // config, no regression.
      const third = await night();
      assert.equal(third.exitCode, 0, third.stderr);
      assert.equal(readdirSync(runs).length, 2);
      assert.equal(
        (JSON.parse(readFileSync(join(stoppedDir, 'run.json'), 'utf8')) as { status: string; resumes: unknown[] })
          .resumes.length,
        1,
      );
      assert.match(third.stdout, /no significant regression and the same chosen config vs previous run/);

      // A slower night: every throughput metric drops by 23% (1/1.3), beyond the 10% threshold.
      const slow = await night({ SIMULATED_GPU_SLOWDOWN: '1.3' });
      assert.equal(slow.exitCode, 3, slow.stderr);
      assert.match(slow.stdout, /REGRESSION: .* is -23\.\d% \[/);
      assert.match(slow.stderr, /tunebench nightly: REGRESSION beyond 10%/);
      // The accept command names the night that was judged, ready to paste (no <run-dir> placeholder).
      const latest = join(runs, readdirSync(runs).sort().at(-1)!);
      assert.ok(slow.stderr.includes(`if it is intended: tunebench baseline accept ${latest})`), slow.stderr);
      // On GitHub Actions each night's history lands in the step summary.
      assert.equal((readFileSync(summary, 'utf8').match(/^# tunebench history: nightly$/gm) ?? []).length, 3);
    },
  );
});
