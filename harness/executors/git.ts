// The git side of a bisection: the commits between two revisions, a detached worktree per tested
// commit (the user's checkout is never touched), and a commit's subject and author. It lives with
// the executors because it prepares where trials run; the engine wires it to runBisect.
import { join } from 'node:path';
import { execa } from 'execa';
import { ConfigError, StoreError } from '../errors.js';

export interface CommitInfo {
  sha: string;
  subject: string;
  author: string;
  email: string;
  /** Author date, ISO 8601. */
  date: string;
}

async function git(repo: string, args: readonly string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const r = await execa('git', ['-C', repo, ...args], { reject: false, stdin: 'ignore' });
  return { ok: r.exitCode === 0, stdout: String(r.stdout), stderr: String(r.stderr).trim() };
}

/** The full sha of `rev` as a commit; a ConfigError that names the revision when there is none. */
export async function resolveCommit(repo: string, rev: string): Promise<string> {
  if (rev.startsWith('-'))
    throw new ConfigError(`git revision "${rev}" starts with "-"; expected a commit, branch or tag name`);
  const r = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  if (!r.ok) {
    const inRepo = await git(repo, ['rev-parse', '--git-dir']);
    throw new ConfigError(
      inRepo.ok
        ? `git revision "${rev}" is not a commit of ${repo}; expected a commit, branch or tag (see git log)`
        : `${repo} is not a git repository (${inRepo.stderr}); pass the repository with --repo`,
    );
  }
  return r.stdout.trim();
}

/**
 * The commits after `good` up to `bad` on the ancestry path, oldest first (bad last): what a
 * bisection tests. A ConfigError when good is not an ancestor of bad, or they are the same.
 */
export async function commitsBetween(repo: string, good: string, bad: string): Promise<string[]> {
  const g = await resolveCommit(repo, good);
  const b = await resolveCommit(repo, bad);
  if (g === b) throw new ConfigError(`--good and --bad are the same commit (${g.slice(0, 12)}); nothing to bisect`);
  const ancestor = await git(repo, ['merge-base', '--is-ancestor', g, b]);
  if (!ancestor.ok)
    throw new ConfigError(
      `--good ${good} (${g.slice(0, 12)}) is not an ancestor of --bad ${bad} (${b.slice(0, 12)}); ` +
        'expected the older, good commit first (swap them if they are reversed)',
    );
  const r = await git(repo, ['rev-list', '--ancestry-path', '--topo-order', '--reverse', `${g}..${b}`]);
  if (!r.ok) throw new StoreError(`git rev-list failed in ${repo}: ${r.stderr}`);
  return r.stdout.split('\n').filter((line) => line.length > 0);
}

/** Subject, author and date of a commit. */
export async function commitInfo(repo: string, rev: string): Promise<CommitInfo> {
  const sha = await resolveCommit(repo, rev);
  const r = await git(repo, ['show', '-s', '--format=%H%x00%s%x00%an%x00%ae%x00%aI', sha]);
  const [full, subject, author, email, date] = r.stdout.trim().split('\0');
  if (!r.ok || date === undefined) throw new StoreError(`git show failed for ${sha} in ${repo}: ${r.stderr}`);
  return { sha: full!, subject: subject!, author: author!, email: email!, date };
}

/** The worktree folder of a commit under `parent`. */
export function worktreePath(parent: string, sha: string): string {
  return join(parent, sha.slice(0, 12));
}

/**
 * A detached worktree of `sha` under `parent` (made if missing); returns its path. A folder left
 * there by a killed run is replaced, so a resumed bisection starts from a clean checkout.
 */
export async function addWorktree(repo: string, sha: string, parent: string): Promise<string> {
  const dir = worktreePath(parent, sha);
  await removeWorktree(repo, dir);
  const r = await git(repo, ['worktree', 'add', '--detach', '--force', dir, sha]);
  if (!r.ok) throw new StoreError(`could not make a worktree of ${sha.slice(0, 12)} at ${dir}: ${r.stderr}`);
  return dir;
}

/** Removes a worktree made by addWorktree (nothing when it is not there), and prunes git's record of it. */
export async function removeWorktree(repo: string, dir: string): Promise<void> {
  const listed = await git(repo, ['worktree', 'list', '--porcelain']);
  if (listed.stdout.split('\n').includes(`worktree ${dir}`)) {
    const r = await git(repo, ['worktree', 'remove', '--force', '--force', dir]);
    if (!r.ok) throw new StoreError(`could not remove the worktree ${dir}: ${r.stderr}`);
  }
  await git(repo, ['worktree', 'prune']);
}
