// The nightly recipe (experiments/nightly/nightly.sh) end to end in a project's own git repository, on the
// deterministic simulated GPU: quiet nights pass, the first night of a slower commit fails loudly with exit
// 3 (the paired gate runs both commits tonight), and a night stopped by SIGTERM is resumed by the next
// night's job instead of starting over. With BISECT=1 a regression runs the bisect command the gate
// printed between the two nights' commits.
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import type { BisectFile } from '../../harness/report/bisect.js';
import { makeBisectRepo } from '../support/bisect-repo.js';
import { NIGHTLY_EXPERIMENT } from '../support/history.js';
import { CLI, PROGRAMS, ROOT, tempDir } from '../support/paths.js';
import { waitFor } from '../support/wait.js';

const SCRIPT = join(ROOT, 'experiments', 'nightly', 'nightly.sh');

describe('the nightly recipe', { timeout: 5 * 60_000 }, () => {
  it(
    'passes quiet nights, resumes a night stopped by SIGTERM, ' +
      'and exits 3 with REGRESSION on the first night of a commit 30% slower',
    async () => {
      // The project: a git repository with the simulated GPU program, its experiment and the nightly script
      // kept at experiments/nightly/ as in tunebench's own tree.
      const repo = realpathSync(tempDir('tunebench-nightly-repo-'));
      const git = (...args: string[]) => execa('git', ['-C', repo, ...args]);
      await git('init', '-q');
      await git('config', 'user.email', 'dev@example.com');
      await git('config', 'user.name', 'Dev Eloper');
      mkdirSync(join(repo, 'programs'));
      mkdirSync(join(repo, 'experiments', 'nightly'), { recursive: true });
      for (const f of ['simulated-gpu.mjs', 'emit.mjs']) copyFileSync(join(PROGRAMS, f), join(repo, 'programs', f));
      copyFileSync(NIGHTLY_EXPERIMENT, join(repo, 'experiments', 'nightly.yaml'));
      const script = join(repo, 'experiments', 'nightly', 'nightly.sh');
      copyFileSync(SCRIPT, script);
      chmodSync(script, 0o755);
      await git('add', '-A');
      await git('commit', '-q', '-m', 'first');
      const reports = tempDir();
      const summary = join(tempDir(), 'summary.md');
      const night = (extra: Record<string, string> = {}) =>
        execa(script, [], {
          reject: false,
          env: {
            EXPERIMENT: 'experiments/nightly.yaml',
            REPORTS: reports,
            THRESHOLD: '10',
            TUNEBENCH: `${process.execPath} ${CLI}`,
            GITHUB_STEP_SUMMARY: summary,
            ...extra,
          },
        });
      const first = await night();
      assert.equal(first.exitCode, 0, first.stderr);
      assert.match(first.stdout, /^tunebench gate: night \S+ \(\w{12}\) starts the gate's ledger/m);

      // The second night is stopped by SIGTERM mid-run (as SLURM preemption does); the script passes the
      // signal on, tunebench writes a partial report and the script exits 130.
      const second = night();
      const runs = join(reports, 'nightly');
      // Stop it once the second run has journaled a few trials.
      await waitFor('the second night under way', () => {
        const id = readdirSync(runs)
          .filter((d) => d !== 'nights.json')
          .sort()[1];
        return id && readFileSync(join(runs, id, 'trials.jsonl'), 'utf8').split('\n').length > 4 ? id : null;
      });
      second.kill('SIGTERM');
      const stopped = await second;
      assert.equal(stopped.exitCode, 130, stopped.stderr);
      const runDirs = () =>
        readdirSync(runs)
          .filter((d) => d !== 'nights.json')
          .sort();
      const stoppedDir = join(runs, runDirs()[1]!);
      assert.equal(
        (JSON.parse(readFileSync(join(stoppedDir, 'run.json'), 'utf8')) as { status: string }).status,
        'stopped',
      );

      // The next night resumes that run (no third run directory). Its commit is the reference's: no code
      // changed, so it is not a code regression, whatever the machine did.
      const third = await night();
      assert.equal(third.exitCode, 0, third.stderr);
      assert.equal(runDirs().length, 2);
      assert.equal(
        (JSON.parse(readFileSync(join(stoppedDir, 'run.json'), 'utf8')) as { status: string; resumes: unknown[] })
          .resumes.length,
        1,
      );
      assert.match(third.stdout, /^tunebench gate: night \S+ runs the reference's commit \w{12}: no code changed/m);

      // A commit whose steps take 30% longer: tonight's build and the reference's run tonight in paired
      // rounds, and the first night of the slow commit fails, beyond the 10% threshold.
      const program = join(repo, 'programs', 'simulated-gpu.mjs');
      writeFileSync(
        program,
        readFileSync(program, 'utf8').replace(
          'process.env.SIMULATED_GPU_SLOWDOWN ?? 1)',
          'process.env.SIMULATED_GPU_SLOWDOWN ?? 1.3)',
        ),
      );
      await git('commit', '-q', '-am', 'slower steps');
      const slow = await night();
      assert.equal(slow.exitCode, 3, `${slow.stdout}\n${slow.stderr}`);
      assert.match(
        slow.stdout,
        /^tunebench gate: REGRESSION: \w{12} against the reference \w{12} .*: tonight\/reference 0\.7\d\dx \[/m,
      );
      assert.match(slow.stderr, /tunebench nightly: REGRESSION beyond 10%/);
      // The accept command names the night that was judged, ready to paste (no <run-dir> placeholder).
      const latest = join(runs, runDirs().at(-1)!);
      assert.ok(slow.stderr.includes(`if it is intended: tunebench baseline accept ${latest})`), slow.stderr);
      // The ledger keeps every judged night; a flagged one is never a reference.
      const ledger = (JSON.parse(readFileSync(join(runs, 'nights.json'), 'utf8')) as { nights: { verdict: string }[] })
        .nights;
      assert.deepEqual(
        ledger.map((n) => n.verdict),
        ['first', 'same-commit', 'flagged'],
      );
      // On GitHub Actions each night's history lands in the step summary.
      assert.equal((readFileSync(summary, 'utf8').match(/^# tunebench history: nightly$/gm) ?? []).length, 3);
    },
  );

  it("BISECT=1: a regression runs the bisect command the gate printed, between the two nights' commits, and exits 3", async () => {
    // The project: a git repository whose program does 5x the work at its last commit, with the nightly
    // script kept at experiments/nightly/ as in tunebench's own tree (untracked: checkouts keep it).
    const repo = tempDir('tunebench-bisect-');
    const shas = makeBisectRepo(repo, { commits: 2, slowAt: 2, slowdown: 4, work: 20000 });
    const script = join(repo, 'experiments', 'nightly', 'nightly.sh');
    mkdirSync(join(repo, 'experiments', 'nightly'), { recursive: true });
    copyFileSync(SCRIPT, script);
    chmodSync(script, 0o755);
    const file = join(realpathSync(repo), 'bench.yaml');
    writeFileSync(
      file,
      'name: work\nworkload: { kind: command, command: [sh, work.sh] }\n' +
        'stages: [{ kind: sweep, name: time, params: { variant: [a] }, strategy: grid, repeats: 10 }]\n',
    );
    const reports = tempDir();
    const night = async (sha: string, extra: Record<string, string> = {}) => {
      await execa('git', ['-C', repo, 'checkout', '-q', sha]);
      return execa(script, [], {
        reject: false,
        env: {
          EXPERIMENT: 'bench.yaml',
          REPORTS: reports,
          THRESHOLD: '10',
          TUNEBENCH: `${process.execPath} ${CLI}`,
          ...extra,
        },
      });
    };
    const quiet = await night(shas[0]!);
    assert.equal(quiet.exitCode, 0, quiet.stderr);
    const slow = await night(shas[2]!, { BISECT: '1', BISECT_BUILD: 'sh build.sh' });
    assert.equal(slow.exitCode, 3, `${slow.stdout}\n${slow.stderr}`);

    // The gate measured the two commits paired and printed the command between them, as the nights' run.json
    // files record them.
    const runs = readdirSync(join(reports, 'work'))
      .filter((d) => d !== 'nights.json')
      .sort();
    const commit = (id: string) =>
      (
        JSON.parse(readFileSync(join(reports, 'work', id, 'run.json'), 'utf8')) as {
          environment: { git_commit: string; git_root: string };
        }
      ).environment;
    assert.deepEqual(
      runs.map((id) => commit(id)),
      [shas[0], shas[2]].map((sha) => ({ ...commit(runs[0]!), git_commit: sha })),
    );
    const args = ['--repo', realpathSync(repo), '--good', shas[0]!, '--bad', shas[2]!, file];
    assert.ok(
      slow.stderr
        .split('\n')
        .includes(`tunebench gate: the commit that made it slower: tunebench bisect ${args.join(' ')}`),
      slow.stderr,
    );
    assert.match(slow.stderr, /^tunebench nightly: REGRESSION beyond 10%/m);
    assert.match(slow.stderr, /^tunebench nightly: bisecting the regression \(BISECT=1\)/m);

    // The script ran it (with BISECT_BUILD) into $REPORTS/bisect/: it names the slow commit (under heavy
    // load, a range whose slower end it is).
    const bisections = readdirSync(join(reports, 'bisect', 'work'));
    assert.equal(bisections.length, 1);
    const dir = join(reports, 'bisect', 'work', bisections[0]!);
    const recorded = (JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { bisect: Record<string, unknown> })
      .bisect;
    assert.deepEqual(
      [recorded['repo'], recorded['good'], recorded['bad'], recorded['build']],
      [realpathSync(repo), shas[0], shas[2], 'sh build.sh'],
    );
    const o = (JSON.parse(readFileSync(join(dir, 'bisect.json'), 'utf8')) as BisectFile).result.outcome;
    if (o.kind === 'culprit') assert.equal(o.commit, shas[2]);
    else assert.ok(o.kind === 'range' && o.commits.at(-1) === shas[2], JSON.stringify(o));
    assert.ok(slow.stdout.includes(`run directory: ${dir}`), slow.stdout);
  });
});
