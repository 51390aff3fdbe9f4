// Commands a run starts beside its trials (tunebench time --setup and --cleanup, bisect --build), contained
// as trials are (issue 45): each starts inside one cgroup of the run, through the same join wrapper with a
// clean environment, and whatever they leave running (a daemon, a server a setup started for the
// benchmark) is ended when the run ends, not left on the machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canContain, cgroupHost } from './cgroup-host.js';
import { cgroupMembers, createTrialCgroup, killTrialCgroup, removeTrialCgroup, type TrialCgroup } from './cgroup.js';
import { joinArgv, WRAPPER_ENV, writeEnvFile } from './launch-join.js';
import { NO_SCOPE, selfOwner } from './owner.js';
import { procStat } from './pids.js';

/** The fd on which the join wrapper reports that it joined (collected and ignored: the wrapper exits if it cannot join). */
export const CONTAINED_JOIN_FD = 3;

export class ContainedCommands {
  /** Made at the first command (a bisection without --build makes none); null where none can be made. */
  private cgroup: TrialCgroup | null | undefined;
  private envDir: string | undefined;
  private n = 0;

  constructor(
    private readonly label: string,
    private readonly scope = NO_SCOPE,
  ) {}

  /** One cgroup for every command of the run; null where none can be made (the commands run as before). */
  private own(): TrialCgroup | null {
    if (this.cgroup !== undefined) return this.cgroup;
    const host = cgroupHost();
    this.cgroup = null;
    if (!canContain(host)) return null;
    try {
      this.cgroup = createTrialCgroup(host, selfOwner(this.scope), this.label, null);
      // What the commands start comes after the harness: nothing older is theirs.
      this.cgroup.minStartTicks = procStat(process.pid)?.startTicks ?? 0;
    } catch {
      this.cgroup = null;
    }
    return this.cgroup;
  }

  /**
   * The argv and environment that run `argv` with `env` inside the run's cgroup (spawn it with an extra pipe
   * at CONTAINED_JOIN_FD); `argv` and `env` as they are where nothing can be contained.
   */
  wrap(argv: readonly string[], env: Readonly<Record<string, string | undefined>>) {
    const cgroup = this.own();
    if (!cgroup) return { argv: [...argv], env: { ...env } };
    this.envDir ??= mkdtempSync(join(tmpdir(), 'tunebench-commands-'));
    const file = join(this.envDir, `${++this.n}.env`);
    writeEnvFile(file, env);
    return { argv: joinArgv(cgroup.procsFiles, argv, file, CONTAINED_JOIN_FD), env: { ...WRAPPER_ENV } };
  }

  /** Ends every process the commands left and removes the cgroup; returns how many were running. */
  end(): number {
    if (this.envDir) rmSync(this.envDir, { recursive: true, force: true });
    this.envDir = undefined;
    if (!this.cgroup) return 0;
    const left = cgroupMembers(this.cgroup).length;
    killTrialCgroup(this.cgroup);
    removeTrialCgroup(this.cgroup);
    this.cgroup = undefined;
    return left;
  }
}
