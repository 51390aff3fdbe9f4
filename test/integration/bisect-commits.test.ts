// A bisection's commits on disk, on a real git repository: a detached worktree per commit under the run
// directory (the user's checkout untouched), the build journaled in builds.jsonl and reused after a restart,
// a failed build with its output, the workload that runs a trial in the worktree of its commit (found by
// the coordinator's map, or by its path on a cluster node), and every worktree removed at the end.
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { BUILDS_FILE, CommitTrees, WORKTREES_DIR, worktreeWorkload } from '../../harness/engine/bisect-commits.js';
import type { WorkloadOptions } from '../../harness/workloads/index.js';
import { makeBisectRepo } from '../support/bisect-repo.js';
import { tempDir } from '../support/paths.js';

const WORKLOAD: WorkloadOptions = {
  kind: 'command',
  command: ['sh', 'work.sh'],
  protocol: 'optional',
  warm_start: 'off',
};
const measure = { warmupSteps: 0, steps: 1 };

function setup(brokenAt?: number) {
  const repo = tempDir('tunebench-bisect-');
  const shas = makeBisectRepo(repo, { commits: 3, ...(brokenAt !== undefined ? { brokenAt } : {}) });
  const runDir = tempDir();
  const opts = {
    repo,
    runDir,
    build: 'sh build.sh && echo built > built.txt',
    buildTimeoutSeconds: 30,
    workload: WORKLOAD,
    seed: 1,
    experimentInRepo: null,
  };
  return { repo, shas, runDir, opts };
}

describe('the commits of a bisection (CommitTrees)', () => {
  it('builds each commit in its own worktree, journals the build, and runs trials there', async () => {
    const { repo, shas, runDir, opts } = setup();
    const trees = new CommitTrees(opts);
    assert.equal(trees.built(shas[1]!), null);
    const b = await trees.prepare(shas[1]!);
    assert.equal(b.ok, true);
    const tree = join(runDir, WORKTREES_DIR, shas[1]!.slice(0, 12));
    // The worktree holds that commit, and the build ran in it.
    assert.equal(readFileSync(join(tree, 'version'), 'utf8'), '1\n');
    assert.equal(readFileSync(join(tree, 'built.txt'), 'utf8'), 'built\n');
    const cmd = trees.workload('bisect', {}).command({ commit: shas[1]! }, measure);
    assert.equal(cmd.cwd, tree);
    // On a node of a cluster the same trial finds the worktree by its path.
    const onNode = worktreeWorkload(opts, 'bisect', {}).command({ commit: shas[1]! }, measure);
    assert.deepEqual(onNode.argv, cmd.argv);
    assert.equal(onNode.cwd, tree);
    assert.throws(
      () => worktreeWorkload(opts, 'bisect', {}).command({ commit: shas[2]! }, measure),
      new RegExp(`bisect: commit ${shas[2]!.slice(0, 12)} has no worktree to run in`),
    );
    assert.throws(() => trees.workload('bisect', {}).command({ commit: shas[2]! }, measure), /has no worktree/);
    // A restarted coordinator (resume) knows the build from builds.jsonl and does not build again.
    const journaled = readFileSync(join(runDir, BUILDS_FILE), 'utf8').trim().split('\n');
    assert.equal(journaled.length, 1);
    assert.equal(new CommitTrees(opts).built(shas[1]!)?.ok, true);
    // A line cut short by a kill, or one that is not a whole build record (no detail, no seconds), is ignored: that commit builds again.
    appendFileSync(join(runDir, BUILDS_FILE), `{"commit":"${shas[2]!}","ok":true}\n{"commit":"${shas[3]!}","ok":tr\n`);
    const reread = new CommitTrees(opts);
    assert.equal(reread.built(shas[2]!), null);
    assert.equal(reread.built(shas[3]!), null);
    assert.equal(reread.built(shas[1]!)?.ok, true);
    await trees.release(shas[1]!);
    assert.ok(!existsSync(tree));
    await trees.prepare(shas[2]!);
    await trees.releaseAll();
    assert.ok(!existsSync(join(runDir, WORKTREES_DIR)));
    // The user's checkout is untouched and git keeps no record of the worktrees.
    assert.equal((await execa('git', ['-C', repo, 'status', '--porcelain'])).stdout, '');
    assert.equal((await execa('git', ['-C', repo, 'worktree', 'list'])).stdout.split('\n').length, 1);
  });

  it('records a failed build with the tail of its output, once', async () => {
    const { shas, runDir, opts } = setup(2);
    const trees = new CommitTrees(opts);
    const b = await trees.prepare(shas[2]!);
    assert.equal(b.ok, false);
    assert.match(b.detail, /^the build command exited with 1: syntax error in module$/);
    await trees.release(shas[2]!);
    // Prepared again (a resumed run), the journaled failure is reused, not appended again.
    assert.equal((await trees.prepare(shas[2]!)).ok, false);
    assert.equal(readFileSync(join(runDir, BUILDS_FILE), 'utf8').trim().split('\n').length, 1);
    await trees.releaseAll();
  });

  it('ends a build that outlives --build-timeout, as a failed build', async () => {
    const { shas, opts } = setup();
    const trees = new CommitTrees({ ...opts, build: 'sleep 5', buildTimeoutSeconds: 0.5 });
    const t0 = Date.now();
    const b = await trees.prepare(shas[1]!);
    assert.equal(b.ok, false);
    assert.match(b.detail, /^the build command timed out after 0\.5 s/);
    assert.ok(Date.now() - t0 < 4000, `${Date.now() - t0} ms`);
    await trees.releaseAll();
  });
});
