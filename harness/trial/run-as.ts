// limits.user: trials run as an unprivileged user. A workload run as root can undo any cgroup from inside
// (lift its own cap, write its pid into a parent's cgroup.procs); one that is not root cannot, because the
// cgroup files stay root's. The harness (root) moves the trial's first process into its cgroups itself,
// before that process runs anything, and gives the user only the files the trial writes.
import { chownSync, readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';

export interface RunAs {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** The passwd entry of `user` (a name or a numeric uid) from /etc/passwd; undefined when there is none. */
function passwdEntry(user: string, passwd: string): RunAs | undefined {
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid, , home] = line.split(':');
    if (name === undefined || uid === undefined || gid === undefined) continue;
    if (name === user || (/^\d+$/.test(user) && uid === user))
      return { name, uid: Number(uid), gid: Number(gid), home: home || '/' };
  }
  return undefined;
}

/** The user of limits.user, checked: tunebench must be root, and the user must exist and not be root. */
export function resolveUser(user: string, passwd = readPasswd(), euid = process.geteuid?.() ?? -1): RunAs {
  if (euid !== 0)
    throw new ConfigError(
      `limits.user: running trials as "${user}" needs tunebench to run as root (it runs as uid ${euid}); ` +
        'run tunebench as root, or remove limits.user (a workload run as yourself cannot undo root-owned cgroups)',
    );
  const entry = passwdEntry(user, passwd);
  if (!entry)
    throw new ConfigError(
      `limits.user: there is no user "${user}" on this machine (/etc/passwd); create it (useradd --system ${user}) or name another`,
    );
  if (entry.uid === 0)
    throw new ConfigError(
      `limits.user: "${user}" is root (uid 0), which can undo its cgroups; name an unprivileged user`,
    );
  return entry;
}

function readPasswd(): string {
  try {
    return readFileSync('/etc/passwd', 'utf8');
  } catch {
    return '';
  }
}

/** Gives a file the harness made to the trial's user (the events file the trial appends to, its environment). */
export function giveTo(path: string, as: RunAs | undefined): void {
  if (as) chownSync(path, as.uid, as.gid);
}
