// The bisect command a failed regression gate gives (history/bisect-hint.ts) on synthetic nights
// whose run.json files record commits, and each reason it gives none.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bisectHint, type BisectHint } from '../../../harness/history/bisect-hint.js';
import { indexRuns } from '../../../harness/history/index.js';
import { analyzeHistory } from '../../../harness/history/trend.js';
import { plantedNights, writeNights } from '../../support/history.js';
import { tempDir } from '../../support/paths.js';

type RunEdit = NonNullable<Parameters<typeof writeNights>[1][number]['edit']>;

/**
 * Three nights at commits c1..c3 of /repo, the last 30% slower (the gate warms up: the baseline is
 * night 2), with `edit` applied to night `at` (1-based) after the commit is set; the hint history gives.
 */
async function hint(o: { step?: number; at?: number; edit?: RunEdit } = {}): Promise<BisectHint | null> {
  const out = tempDir();
  const file = join(out, 'bench.yaml');
  writeFileSync(file, 'name: work\n');
  const nights = plantedNights(3, { at: 2, step: o.step ?? 0.7, noise: 0.01, seed: 3 }).map((n, i) => ({
    ...n,
    edit: (run: Parameters<RunEdit>[0]) => {
      run.environment.git_commit = `c${i + 1}`;
      run.environment.git_root = '/repo';
      run.experiment_file = file;
      run.resolved['workload'] = { kind: 'command', command: ['sh', 'work.sh'] };
      if (i + 1 === (o.at ?? 3)) o.edit?.(run);
    },
  }));
  writeNights(out, nights);
  const runs = (await indexRuns(out)).runs;
  const [h] = analyzeHistory(runs, {
    failPct: 5,
    noiseBand: 0.02,
    allowEnvMismatch: false,
    alarmBudget: 0.04,
    confirm: false,
  });
  return bisectHint(h!, runs);
}

const why = (h: BisectHint | null) => (h && !h.available ? h.why : null);

describe('the bisect command of a failed gate', () => {
  it('bisects from the baseline night to tonight, with the repository and experiment file they record', async () => {
    const h = await hint();
    assert.ok(h?.available, JSON.stringify(h));
    assert.deepEqual(h.args.slice(0, 7), ['bisect', '--repo', '/repo', '--good', 'c2', '--bad', 'c3']);
    assert.match(h.args[7]!, /bench\.yaml$/);
    assert.deepEqual([h.good.run_id, h.bad.run_id], ['night-0002', 'night-0003']);
  });

  it('gives nothing when the gate passes', async () => {
    assert.equal(await hint({ step: 1 }), null);
  });

  it('says why there is none, each reason with its run or value', async () => {
    const at2 = async (edit: RunEdit) => why(await hint({ at: 2, edit }));
    const tonight = async (edit: RunEdit) => why(await hint({ edit }));
    const noCommit = await at2((run) => {
      run.environment.git_commit = null;
    });
    assert.deepEqual(
      [noCommit?.kind, noCommit && 'run' in noCommit && noCommit.run.run_id],
      ['no-commit', 'night-0002'],
    );
    assert.deepEqual(
      await tonight((run) => {
        run.environment.git_commit = 'c2';
      }),
      { kind: 'same-commit', commit: 'c2' },
    );
    assert.deepEqual(
      await tonight((run) => {
        run.resolved['workload'] = { kind: 'onnx' };
      }),
      { kind: 'not-command', workload: 'onnx' },
    );
    assert.deepEqual(
      await tonight((run) => {
        run.experiment_file = '/nowhere/bench.yaml';
      }),
      { kind: 'no-experiment-file', file: '/nowhere/bench.yaml', problem: 'missing' },
    );
    // A one-liner's run (tunebench time) records no file bisect can load.
    assert.deepEqual(
      await tonight((run) => {
        run.experiment_file = '/work/<nightly>';
      }),
      { kind: 'no-experiment-file', file: '/work/<nightly>', problem: 'not-an-experiment-file' },
    );
    assert.deepEqual(
      await tonight((run) => {
        run.environment.git_root = '/elsewhere';
      }),
      { kind: 'other-repo', good_repo: '/repo', bad_repo: '/elsewhere' },
    );
    // A run written before git_root was stored: the command without --repo, to run in the repository.
    const old = await at2((run) => {
      delete run.environment.git_root;
    });
    assert.equal(old?.kind, 'no-repo');
    if (old?.kind === 'no-repo') {
      assert.equal(old.run.run_id, 'night-0002');
      assert.deepEqual(old.args.slice(0, 5), ['bisect', '--good', 'c2', '--bad', 'c3']);
    }
  });
});
