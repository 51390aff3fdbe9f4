// Pieces of the fault tests' workloads: Python that speaks the protocol by hand and acts on its own cgroup
// (as a root workload can), and a check that a process they started is gone.
import { procStat } from '../../harness/trial/pids.js';

/** Whether `pid` runs (a zombie does not). */
export const alive = (pid: number): boolean => {
  const s = procStat(pid);
  return s !== undefined && s.state !== 'Z';
};

/** Python: steps(n), `n` steps and done through the protocol, by hand (no adapter). */
export const PY_STEPS = `
def steps(n=2):
    import json, os
    with open(os.environ["TUNEBENCH_EVENTS"], "a") as f:
        for _ in range(n):
            f.write(json.dumps({"event": "step", "samples": 1, "seconds": 0.01}) + "\\n")
        f.write(json.dumps({"event": "done"}) + "\\n")
`;

/** Python: own_cgroup_dir(), the directory of this process's memory cgroup (v1) or its v2 cgroup. */
export const OWN_CGROUP_DIR = `
def own_cgroup_dir():
    own = {}
    for line in open("/proc/self/cgroup"):
        _, names, path = line.strip().split(":", 2)
        own[names] = path
    for line in open("/proc/self/mountinfo"):
        left, right = line.split(" - ")
        fields, (kind, _, opts) = left.split(), right.split()[:3]
        root, point = fields[3], fields[4]
        if kind == "cgroup" and "memory" in opts.split(","):
            path = next(p for n, p in own.items() if "memory" in n.split(","))
        elif kind == "cgroup2" and "" in own:
            path = own[""]
        else:
            continue
        rel = path[len(root):] if root != "/" and path.startswith(root) else path
        return point + rel
    raise SystemExit("no cgroup")
`;

/**
 * Python: a workload that tries to lift its own memory cap and to leave its cgroups, writes
 * "<uid>|<lift>|<leave>|<remount>" to `tried` (each the error's text, or "written"; remount: the exit status
 * of `mount -o remount,rw` on its cgroup mount), then holds 400 MiB and sends two steps.
 */
export function breakOutScript(tried: string): string {
  return `${PY_STEPS}${OWN_CGROUP_DIR}
import os, subprocess
d = own_cgroup_dir()
def attempt(path, value):
    try:
        open(path, "w").write(value)
        return "written"
    except OSError as e:
        return os.strerror(e.errno)
v1 = os.path.exists(os.path.join(d, "memory.limit_in_bytes"))
lift = attempt(os.path.join(d, "memory.limit_in_bytes" if v1 else "memory.max"), "-1" if v1 else "max")
leave = attempt(os.path.join(os.path.dirname(d), "cgroup.procs"), str(os.getpid()))
remount = subprocess.run(["mount", "-o", "remount,rw", os.path.dirname(d)], capture_output=True).returncode
open(${JSON.stringify(tried)}, "w").write(f"{os.getuid()}|{lift}|{leave}|{remount}")
held = bytearray(400 << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
steps()
`;
}
