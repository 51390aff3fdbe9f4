// Python for fault tests whose workload acts on its own cgroup, as a root workload can.

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
