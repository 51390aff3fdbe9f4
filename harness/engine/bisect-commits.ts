// The commits of a bisection on disk: a detached worktree per commit under the run directory (the
// user's checkout is never touched), the --build command run in it, each build journaled in
// builds.jsonl (a resumed bisection knows which commits built), and a workload that runs each trial
// in the worktree of the commit its config names.
import { ContainedCommands } from '../trial/contained-commands.js';
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { addWorktree, removeWorktree, worktreePath } from '../executors/git.js';
import { COMMIT_PARAMETER } from '../search/bisect-step.js';
import { StoreError } from '../errors.js';
import { createWorkload, type WorkloadOptions } from '../workloads/index.js';
import type { MeasureSteps, TrialCommand, Workload } from '../workloads/workload.js';
import { measuredPeakMemory, type Config, type TrialRecord } from '../domain/index.js';
import type { ArmTrial } from '../search/sweep.js';
import { bisectBuildSchema, type BisectBuild } from '../report/bisect.js';

export const BUILDS_FILE = 'builds.jsonl';
export const WORKTREES_DIR = 'worktrees';

/** One run of the --build command in a commit's worktree, as builds.jsonl journals it. */
export type BuildRecord = BisectBuild;

export interface CommitTreesOptions {
  repo: string;
  runDir: string;
  /** The shell command that builds a commit (run with sh -c in its worktree); absent: no build. */
  build: string | undefined;
  buildTimeoutSeconds: number;
  /** The workload section of the experiment, and the experiment file's path inside the repository (null: a one-liner). */
  workload: WorkloadOptions;
  seed: number;
  experimentInRepo: string | null;
}

/** The worktrees and builds of one bisection. */
export class CommitTrees {
  private readonly live = new Map<string, string>();
  private readonly builds = new Map<string, BuildRecord>();
  /** The builds run contained: what one leaves running (a daemon, a compile server) ends with the bisection. */
  private readonly contained = new ContainedCommands('bisect-builds');

  constructor(private readonly opts: CommitTreesOptions) {
    const file = join(opts.runDir, BUILDS_FILE);
    if (!existsSync(file)) return;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      // A line cut short by a kill, or one that is not a build record: that commit builds again.
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      const b = bisectBuildSchema.safeParse(value);
      if (b.success) this.builds.set(b.data.commit, b.data);
    }
  }

  /** The commit's build, journaled (a resumed run reuses it without building), or null when it has not been built. */
  built(commit: string): BuildRecord | null {
    return this.builds.get(commit) ?? null;
  }

  /** Makes the commit's worktree and builds it (once per worktree); returns the build. */
  async prepare(commit: string): Promise<BuildRecord> {
    const known = this.builds.get(commit);
    if (this.live.has(commit) && known) return known;
    const dir = await addWorktree(this.opts.repo, commit, join(this.opts.runDir, WORKTREES_DIR));
    this.live.set(commit, dir);
    const record = await this.runBuild(commit, dir);
    if (!known) {
      this.builds.set(commit, record);
      appendFileSync(join(this.opts.runDir, BUILDS_FILE), `${JSON.stringify(record)}\n`);
    }
    return record;
  }

  /** A commit whose build was journaled and whose worktree a fresh trial now needs (after a resume). */
  async ensureLive(commit: string): Promise<void> {
    if (this.live.has(commit)) return;
    const b = await this.prepare(commit);
    if (!b.ok)
      throw new StoreError(
        `commit ${commit.slice(0, 12)} built before the bisection was stopped, and does not build now: ${b.detail}`,
      );
  }

  private async runBuild(commit: string, dir: string): Promise<BuildRecord> {
    const started = Date.now();
    if (this.opts.build === undefined) return { commit, ok: true, detail: '', seconds: 0 };
    // Its own process group: at the timeout the whole build ends (a compiler it started included), not only
    // the shell, whose children would otherwise hold its output open until they finished.
    const w = this.contained.wrap(['sh', '-c', this.opts.build], { ...process.env, TUNEBENCH_COMMIT: commit });
    const sub = execa(w.argv[0]!, w.argv.slice(1), {
      cwd: dir,
      reject: false,
      all: true,
      // fd 3: the join wrapper's word, collected and ignored.
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      detached: true,
      env: w.env,
      extendEnv: false,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (sub.pid !== undefined) process.kill(-sub.pid, 'SIGKILL');
      } catch {
        // The group has already gone.
      }
    }, this.opts.buildTimeoutSeconds * 1000);
    const r = await sub;
    clearTimeout(timer);
    const seconds = (Date.now() - started) / 1000;
    if (r.exitCode === 0 && !timedOut) return { commit, ok: true, detail: '', seconds };
    const tail = String(r.all ?? '')
      .trim()
      .split('\n')
      .slice(-5)
      .join('\n');
    const why = timedOut
      ? `timed out after ${this.opts.buildTimeoutSeconds} s`
      : `exited with ${r.exitCode ?? r.signal ?? 'an error'}`;
    return { commit, ok: false, detail: `the build command ${why}${tail ? `: ${tail}` : ''}`, seconds };
  }

  /** Removes the commit's worktree (nothing when it has none). */
  async release(commit: string): Promise<void> {
    const dir = this.live.get(commit);
    if (dir === undefined) return;
    this.live.delete(commit);
    await removeWorktree(this.opts.repo, dir);
  }

  /** Removes every worktree of the run, those a killed run left included. */
  async releaseAll(): Promise<void> {
    this.contained.end();
    for (const commit of [...this.live.keys()]) await this.release(commit);
    rmSync(join(this.opts.runDir, WORKTREES_DIR), { recursive: true, force: true });
    // Not a worktree itself: this only prunes git's records of the folders just deleted.
    await removeWorktree(this.opts.repo, join(this.opts.runDir, WORKTREES_DIR));
  }

  /** The workload whose trials run in the worktree of `config.commit`, as the experiment's would in the repository. */
  workload(description: string, fixedParams: Config): Workload {
    return commitWorkload(this.opts, description, fixedParams, (commit) => this.live.get(commit));
  }
}

/**
 * A workload that runs each trial in the worktree of the commit its config names, found by `treeOf`
 * (undefined: the commit has no worktree, which is an error, never a run of another checkout).
 */
function commitWorkload(
  o: Pick<CommitTreesOptions, 'workload' | 'seed' | 'experimentInRepo'>,
  description: string,
  fixedParams: Config,
  treeOf: (commit: string) => string | undefined,
): Workload {
  const forCommit = (commit: string): Workload => {
    const dir = treeOf(commit);
    if (dir === undefined) throw new StoreError(`bisect: commit ${commit.slice(0, 12)} has no worktree to run in`);
    const inTree = o.experimentInRepo ?? 'tunebench-bisect';
    return createWorkload(o.workload, o.seed, join(dir, inTree));
  };
  return {
    kind: 'command',
    description,
    fixedParams,
    command: (config: Config, measure: MeasureSteps, argv?: readonly string[]): TrialCommand =>
      forCommit(String(config[COMMIT_PARAMETER])).command(config, measure, argv),
  };
}

/**
 * The workload of a bisection's trial on another node of a cluster (a SLURM array task): the
 * coordinator made the commit's worktree under the shared run directory before it submitted the
 * trial, so the worktree is found by its path.
 */
export function worktreeWorkload(
  o: Pick<CommitTreesOptions, 'runDir' | 'workload' | 'seed' | 'experimentInRepo'>,
  description: string,
  fixedParams: Config,
): Workload {
  return commitWorkload(o, description, fixedParams, (commit) => {
    const dir = worktreePath(join(o.runDir, WORKTREES_DIR), commit);
    return existsSync(dir) ? dir : undefined;
  });
}

/** The experiment file's path inside the repository, or null when it lies outside it. */
export function pathInRepo(repo: string, file: string): string | null {
  const rel = relative(repo, file);
  return rel === '' || rel.startsWith('..') || rel.startsWith('/') ? null : rel;
}

/** A journaled trial of a commit as the compare strategy sees it (a bisection step's, a gate night's). */
export function commitTrialOf(record: TrialRecord): ArmTrial {
  return {
    outcome: record.outcome,
    reason: record.reason,
    steps: record.steps,
    wallSeconds: record.wall_seconds,
    memory: measuredPeakMemory(record),
  };
}
