// A real git repository for bisect tests: `commits` commits after a first (good) one, whose program
// (work.sh, a shell loop: fixed CPU work, about 60 ms) gets `slowdown` more work from commit
// `slowAt` on; commit `brokenAt` has no build.sh that succeeds.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BisectRepoOptions {
  commits: number;
  /** 1-based: the first commit after the good one that is slower; absent: none. */
  slowAt?: number;
  slowdown?: number;
  /** 1-based: a commit whose build fails. */
  brokenAt?: number;
  /** Loop iterations of the fast program. */
  work?: number;
}

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Makes the repository in `dir`; returns its commits, oldest (the good one) first. */
export function makeBisectRepo(dir: string, o: BisectRepoOptions): string[] {
  git(dir, 'init', '-q');
  git(dir, 'config', 'user.email', 'dev@example.com');
  git(dir, 'config', 'user.name', 'Dev Eloper');
  const shas: string[] = [];
  for (let i = 0; i <= o.commits; i++) {
    const slow = o.slowAt !== undefined && i >= o.slowAt;
    const n = Math.round((o.work ?? 60000) * (slow ? 1 + (o.slowdown ?? 0.15) : 1));
    writeFileSync(join(dir, 'work.sh'), `i=0\nwhile [ $i -lt ${n} ]; do i=$((i+1)); done\n`);
    writeFileSync(join(dir, 'build.sh'), i === o.brokenAt ? 'echo "syntax error in module" >&2; exit 1\n' : 'exit 0\n');
    writeFileSync(join(dir, 'version'), `${i}\n`);
    git(dir, 'add', 'work.sh', 'build.sh', 'version');
    git(dir, 'commit', '-q', '-m', i === o.slowAt ? `commit ${i}: the slow change` : `commit ${i}`);
    shas.push(git(dir, 'rev-parse', 'HEAD'));
  }
  return shas;
}
