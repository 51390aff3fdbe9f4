// End to end: `tunebench history` on synthetic nights (copies of a real run, scaled per night) and
// `tunebench baseline`: change points, the regression and config-change gates, environment checks.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { compileSpec } from '../../harness/report/render.js';
import { CLI, tempDir } from '../support/paths.js';
import { makeBisectRepo } from '../support/bisect-repo.js';
import { plantedNights, writeNights, type Night } from '../support/history.js';
import { countAllMarks } from '../support/svg.js';

const cli = (args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [CLI, ...args], { reject: false, env });

interface HistoryJson {
  skipped: { dir: string; why: string }[];
  experiments: {
    experiment: string;
    runs: number;
    change_points: { metric: string; index: number; ratio: number; run_id: string }[];
    metrics: { name: string; points: unknown[] }[];
    gate: {
      baseline: { run_id: string; pinned: boolean } | null;
      regressions: { metric: string }[];
      config_changes: { param: string; before: unknown; after: unknown }[];
      env_mismatch: string[] | null;
      notes: string[];
      decided_by: 'series' | 'baseline';
      failing: string[];
      series: {
        acknowledged: string[];
        metrics: {
          name: string;
          failing: boolean;
          test: { reference_from: string | null; reference_to: string | null } | null;
        }[];
      };
    };
    bisect: {
      available: boolean;
      args?: string[];
      command?: string;
      good: { run_id: string } | null;
      bad: { run_id: string };
      why?: { kind: string; run?: { run_id: string } };
      message: string;
    } | null;
  }[];
}

/** A night's run as recorded at commit `sha` of the repository `repo`, running its experiment file `file`. */
function atCommit(night: Night, repo: string, sha: string, file: string): Night {
  return {
    ...night,
    edit: (run) => {
      run.environment.git_commit = sha;
      run.environment.git_root = repo;
      run.experiment_file = file;
      run.resolved['workload'] = { kind: 'command', command: ['sh', 'work.sh'] };
    },
  };
}

/** The commit a run directory's run.json records. */
const commitOf = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { environment: { git_commit: string | null } })
    .environment.git_commit!;

describe('tunebench history', () => {
  it(
    '30 nights with a 15% regression planted at night 20 and +/-3% noise: ' +
      'every throughput series marks night 20 (+/-1) and nothing else',
    async () => {
      const out = tempDir();
      const dirs = new Set(writeNights(out, plantedNights(30, { at: 19, step: 0.85, noise: 0.03, seed: 20 })));
      const summary = join(tempDir(), 'step-summary.md');
      const r = await cli(['history', out, '--json'], { GITHUB_STEP_SUMMARY: summary });
      assert.equal(r.exitCode, 0, r.stderr);
      const h = (JSON.parse(r.stdout) as HistoryJson).experiments[0]!;
      assert.equal(h.runs, 30);
      const throughput = h.metrics.filter((m) => m.name.includes('samples/s'));
      assert.ok(throughput.length >= 4, `${throughput.length} throughput series`);
      // Each throughput series has exactly one change point, at night 20 (index 19) +/- 1, about -15%.
      for (const m of throughput) {
        const marks = h.change_points.filter((c) => c.metric === m.name);
        assert.equal(marks.length, 1, `${m.name}: ${JSON.stringify(marks)}`);
        assert.ok(Math.abs(marks[0]!.index - 19) <= 1, `${m.name} marked night ${marks[0]!.index + 1}`);
        assert.ok(marks[0]!.ratio > 0.8 && marks[0]!.ratio < 0.9, `ratio ${marks[0]!.ratio}`);
      }
      // The max batch did not change: no mark on it, and no mark anywhere else.
      assert.equal(h.change_points.length, throughput.length);
      // The trend chart compiles cleanly and draws one dashed rule per change point.
      const dir = join(out, 'history', 'report-fixture');
      const spec = JSON.parse(readFileSync(join(dir, 'charts', 'history-report-fixture.vl.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      assert.deepEqual((await compileSpec(spec)).warnings, []);
      const svg = readFileSync(join(dir, 'charts', 'history-report-fixture.svg'), 'utf8');
      assert.equal(countAllMarks(svg, 'concat_0_child_layer_2_marks'), throughput.length);
      assert.equal(countAllMarks(svg, 'concat_0_child_layer_3_marks'), throughput.length);
      assert.equal((svg.match(/>-1\d\.\d%</g) ?? []).length, throughput.length);
      const html = readFileSync(join(dir, 'history.html'), 'utf8');
      assert.match(html, /change point: .* -1\d\.\d% .* at run night-00(19|20|21)/);
      assert.match(readFileSync(join(dir, 'history.md'), 'utf8'), /^# tunebench history: report-fixture/);
      assert.match(readFileSync(summary, 'utf8'), /## Key metrics/);
      // The index holds exactly the 30 runs, each as a finished entry.
      const index = JSON.parse(readFileSync(join(out, '.history-index.json'), 'utf8')) as {
        entries: Record<string, { entry: { run_id?: string } }>;
      };
      assert.deepEqual(new Set(Object.keys(index.entries)), dirs);
      assert.ok(Object.values(index.entries).every((e) => e.entry.run_id?.startsWith('night-')));
    },
  );

  it(
    'pinned baseline: --fail-on-regression exits 3 when the nights since the pin are significantly ' +
      'slower beyond the threshold, 0 within it; without the pin the regression is not absorbed either',
    async () => {
      const out = tempDir();
      const dirs = writeNights(out, plantedNights(12, { at: 8, step: 0.85, noise: 0.01, seed: 3 }));
      const pin = await cli(['baseline', 'set', dirs[2]!]);
      assert.equal(pin.exitCode, 0, pin.stderr);
      assert.match(pin.stdout, /baseline of report-fixture: night-0003/);
      const r = await cli(['history', out, '--fail-on-regression', '5', '--no-confirm', '--json']);
      assert.equal(r.exitCode, 3, r.stderr);
      const gate = (JSON.parse(r.stdout) as HistoryJson).experiments[0]!.gate;
      assert.deepEqual(gate.baseline, { ...gate.baseline, run_id: 'night-0003', pinned: true });
      // The pin starts the reference level: the series gate tests the last nights against the nights from the pin on.
      assert.equal(gate.decided_by, 'series');
      assert.deepEqual(gate.series.acknowledged, ['night-0003']);
      assert.ok(
        gate.failing.some((m) => m.startsWith('arena samples/s arena=keep')),
        JSON.stringify(gate.failing),
      );
      assert.ok(
        gate.series.metrics.every((m) => m.test === null || m.test.reference_from === 'night-0003'),
        JSON.stringify(gate.series.metrics.map((m) => m.test)),
      );
      assert.match(r.stderr, /regression beyond 5% in report-fixture/);
      // Every night of the fixture records the same commit: no commit to bisect, and the line says so.
      assert.match(
        r.stderr,
        /^tunebench: no bisect command for report-fixture: the last good run and tonight's both record commit 801981544225: nothing to bisect/m,
      );
      // A 15% drop is within a 25% threshold.
      assert.equal((await cli(['history', out, '--fail-on-regression', '25', '--no-confirm'])).exitCode, 0);
      // Without a pin the old gate's baseline is the run before the latest (same level), but the series
      // gate still compares the last nights with the nights before the drop: the regression is not absorbed.
      assert.equal((await cli(['baseline', 'clear', join(out, 'report-fixture')])).exitCode, 0);
      const previous = await cli(['history', out, '--fail-on-regression', '5', '--no-confirm', '--json']);
      assert.equal(previous.exitCode, 3, previous.stderr);
      const g2 = (JSON.parse(previous.stdout) as HistoryJson).experiments[0]!.gate;
      assert.equal(g2.baseline?.run_id, 'night-0011');
      assert.equal(g2.regressions.length, 0, 'the previous run is at the same level');
      assert.ok(g2.failing.length >= 4, JSON.stringify(g2.failing));
    },
  );

  it(
    'exit 3 prints the bisect command from the last good night to tonight (commits and repository from ' +
      'run.json), or why there is none',
    async () => {
      const repo = tempDir('tunebench-bisect-');
      const shas = makeBisectRepo(repo, { commits: 11 });
      const file = join(repo, 'bench.yaml');
      writeFileSync(
        file,
        'name: work\nworkload: { kind: command, command: [sh, work.sh] }\nstages: [{ kind: sweep, params: { v: [1] } }]\n',
      );
      const nights = plantedNights(12, { at: 8, step: 0.85, noise: 0.01, seed: 3 });
      const out = tempDir();
      const dirs = writeNights(
        out,
        nights.map((n, i) => atCommit(n, repo, shas[i]!, file)),
      );
      const r = await cli(['history', out, '--fail-on-regression', '5', '--no-confirm', '--json']);
      assert.equal(r.exitCode, 3, r.stderr);
      const h = (JSON.parse(r.stdout) as HistoryJson).experiments[0]!;
      // The good night is the newest reference night of the failing metrics (the earliest when they
      // differ), before the regression planted at night 9; the bad one is tonight's.
      const good = h.gate.series.metrics
        .filter((m) => m.failing)
        .map((m) => m.test!.reference_to!)
        .sort()[0]!;
      assert.ok(Number(good.slice(6)) < 9, good);
      const [goodSha, badSha] = [commitOf(dirs[Number(good.slice(6)) - 1]!), commitOf(dirs[11]!)];
      assert.notEqual(goodSha, badSha);
      const args = ['bisect', '--repo', repo, '--good', goodSha, '--bad', badSha, file];
      assert.deepEqual(h.bisect?.args, args);
      assert.deepEqual([h.bisect?.good?.run_id, h.bisect?.bad.run_id], [good, 'night-0012']);
      assert.ok(
        r.stderr
          .split('\n')
          .includes(
            `tunebench: bisect report-fixture (good: run ${good}, bad: run night-0012): tunebench ${args.join(' ')}`,
          ),
        r.stderr,
      );
      const saved = JSON.parse(readFileSync(join(out, 'history', 'report-fixture', 'history.json'), 'utf8')) as {
        bisect: { command: string };
      };
      assert.equal(saved.bisect.command, `tunebench ${args.join(' ')}`);

      // Tonight's run records no commit (tunebench ran outside a checkout): no command, and why.
      const tonight = join(dirs[11]!, 'run.json');
      const run = JSON.parse(readFileSync(tonight, 'utf8')) as { environment: { git_commit: string | null } };
      run.environment.git_commit = null;
      writeFileSync(tonight, JSON.stringify(run));
      const none = await cli(['history', out, '--fail-on-regression', '5', '--no-confirm', '--json']);
      assert.equal(none.exitCode, 3, none.stderr);
      assert.ok(
        none.stderr
          .split('\n')
          .includes(
            'tunebench: no bisect command for report-fixture: run night-0012 records no git commit ' +
              '(run tunebench from a git checkout of the code it measures)',
          ),
        none.stderr,
      );
      const b = (JSON.parse(none.stdout) as HistoryJson).experiments[0]!.bisect;
      assert.deepEqual([b?.available, b?.why?.kind, b?.why?.run?.run_id], [false, 'no-commit', 'night-0012']);
    },
  );

  it('--fail-on-config-change exits 4 when the latest run chose another value', async () => {
    const out = tempDir();
    const nights = plantedNights(6, { at: 99, step: 1, noise: 0.01, seed: 4 });
    nights[5]!.edit = (run) => {
      run.result.chosen['intra_op_threads'] = 1;
    };
    writeNights(out, nights);
    const plain = await cli(['history', out]);
    assert.equal(plain.exitCode, 0, plain.stderr);
    assert.match(plain.stdout, /CONFIG CHANGE: intra_op_threads 2 -> 1 vs previous run night-0005/);
    const r = await cli(['history', out, '--fail-on-config-change']);
    assert.equal(r.exitCode, 4);
    assert.match(r.stderr, /the chosen config changed in report-fixture/);
  });

  it('refuses a baseline from another environment unless --allow-env-mismatch, and then flags it', async () => {
    const out = tempDir();
    const nights = plantedNights(5, { at: 99, step: 1, noise: 0.01, seed: 5 });
    nights[4]!.edit = (run) => {
      run.environment.cpu.model = 'Intel Xeon Platinum 8480+';
    };
    const dirs = writeNights(out, nights);
    assert.equal((await cli(['baseline', 'set', dirs[1]!])).exitCode, 0);
    const r = await cli(['history', out]);
    assert.equal(r.exitCode, 2);
    assert.match(
      r.stderr,
      new RegExp(
        'refusing to compare report-fixture run night-0005 with baseline night-0002: they ran in different ' +
          'environments \\(CPU differs: .*AMD EPYC.* before, .*Intel Xeon Platinum 8480\\+.* after\\)\\. ' +
          'Pin a baseline from this environment .* or compare anyway with --allow-env-mismatch',
      ),
    );
    const allowed = await cli(['history', out, '--allow-env-mismatch', '--json']);
    assert.equal(allowed.exitCode, 0, allowed.stderr);
    const h = (JSON.parse(allowed.stdout) as HistoryJson).experiments[0]!;
    assert.ok(h.gate.env_mismatch?.some((d) => d.startsWith('CPU differs')));
    assert.match(
      readFileSync(join(out, 'history', 'report-fixture', 'history.md'), 'utf8'),
      /\*\*ENVIRONMENT MISMATCH \(allowed by --allow-env-mismatch\)/,
    );
    // The other environment is its own series: 4 nights in one, 1 in the other.
    const envs = (
      JSON.parse(readFileSync(join(out, 'history', 'report-fixture', 'history.json'), 'utf8')) as {
        environments: { runs: number }[];
      }
    ).environments;
    assert.deepEqual(envs.map((e) => e.runs).sort(), [1, 4]);
  });

  it('skips unfinished runs with the reason, names unknown experiments, and keeps an index of the runs', async () => {
    const out = tempDir();
    const nights = plantedNights(4, { at: 99, step: 1, noise: 0.01, seed: 6 });
    nights[3]!.edit = (run) => {
      run.status = 'stopped';
    };
    writeNights(out, nights);
    const r = await cli(['history', out, '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    const h = JSON.parse(r.stdout) as HistoryJson;
    assert.equal(h.experiments[0]!.runs, 3);
    assert.equal(h.skipped.length, 1);
    assert.match(h.skipped[0]!.why, /did not finish \(status stopped\); resume it with tunebench run --resume/);
    assert.ok(existsSync(join(out, '.history-index.json')));
    const unknown = await cli(['history', out, '--experiment', 'nope']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderr, /no finished run of experiment "nope"; experiments with runs: "report-fixture"/);
    const empty = await cli(['history', tempDir()]);
    assert.equal(empty.exitCode, 2);
    assert.match(empty.stderr, /holds no finished run/);
    writeFileSync(join(out, 'report-fixture', 'night-0001', 'run.json'), '{');
    const damaged = await cli(['history', out, '--json']);
    assert.equal((JSON.parse(damaged.stdout) as HistoryJson).skipped.length, 2);
  });
});
