// The git side of bisect against a real temporary repository: commits between two revisions,
// worktrees per commit (made, replaced, removed, the checkout untouched), commit subject and author,
// and the errors for bad revisions.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  addWorktree,
  commitInfo,
  commitsBetween,
  removeWorktree,
  resolveCommit,
} from '../../../harness/executors/git.js';
import { ConfigError } from '../../../harness/errors.js';
import { tempDir } from '../../support/paths.js';

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Ada Author',
  GIT_AUTHOR_EMAIL: 'ada@example.org',
  GIT_COMMITTER_NAME: 'Ada Author',
  GIT_COMMITTER_EMAIL: 'ada@example.org',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: tempDir('tunebench-git-home-'),
};
const git = (repo: string, ...args: string[]) =>
  execFileSync('git', ['-C', repo, ...args], { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] })
    .toString()
    .trim();

/** A repository of `n` commits; commit i writes work.txt = i and has the subject "step i". */
function repository(n: number): { repo: string; shas: string[] } {
  const repo = tempDir('tunebench-git-');
  git(repo, 'init', '-q', '-b', 'main');
  const shas: string[] = [];
  for (let i = 0; i < n; i++) {
    writeFileSync(join(repo, 'work.txt'), `${i}\n`);
    git(repo, 'add', 'work.txt');
    git(repo, 'commit', '-q', '-m', `step ${i}`);
    shas.push(git(repo, 'rev-parse', 'HEAD'));
  }
  return { repo, shas };
}

describe('git for bisect', () => {
  const { repo, shas } = repository(16);

  it('lists the commits after good up to bad, oldest first', async () => {
    assert.deepEqual(await commitsBetween(repo, shas[0]!, 'main'), shas.slice(1));
    assert.deepEqual(await commitsBetween(repo, 'main~3', 'main~1'), shas.slice(13, 15));
  });

  it('refuses reversed, equal and unknown revisions with what to do', async () => {
    await assert.rejects(commitsBetween(repo, 'main', shas[0]!), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /is not an ancestor of --bad .*swap them/);
      return true;
    });
    await assert.rejects(commitsBetween(repo, 'main', 'main'), /the same commit/);
    await assert.rejects(resolveCommit(repo, 'no-such-branch'), /"no-such-branch" is not a commit of/);
    await assert.rejects(resolveCommit(repo, '--all'), /starts with "-"/);
    await assert.rejects(resolveCommit(tempDir(), 'HEAD'), /is not a git repository.*--repo/);
  });

  it('reads a commit subject and author', async () => {
    const info = await commitInfo(repo, shas[11]!);
    assert.equal(info.sha, shas[11]);
    assert.equal(info.subject, 'step 11');
    assert.equal(info.author, 'Ada Author');
    assert.equal(info.email, 'ada@example.org');
    assert.match(info.date, /^\d{4}-\d\d-\d\dT/);
  });

  it('makes a detached worktree per commit, replaces a leftover one, and removes it', async () => {
    const parent = tempDir('tunebench-worktrees-');
    const dir = await addWorktree(repo, shas[7]!, parent);
    assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), '7\n');
    assert.equal(git(dir, 'rev-parse', 'HEAD'), shas[7]);
    assert.equal(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD'), 'HEAD', 'detached');
    writeFileSync(join(dir, 'work.txt'), 'dirty\n');
    const again = await addWorktree(repo, shas[7]!, parent);
    assert.equal(again, dir);
    assert.equal(readFileSync(join(dir, 'work.txt'), 'utf8'), '7\n', 'a leftover worktree is replaced');
    assert.equal(readFileSync(join(repo, 'work.txt'), 'utf8'), '15\n', "the user's checkout is untouched");
    assert.equal(git(repo, 'status', '--porcelain'), '');
    await removeWorktree(repo, dir);
    assert.equal(existsSync(dir), false);
    assert.doesNotMatch(git(repo, 'worktree', 'list'), /worktrees-/);
    await removeWorktree(repo, dir);
  });
});
