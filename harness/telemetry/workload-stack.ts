// The workload's own stack in the fingerprint: the Python that runs it and the versions of torch and numpy
// installed there (and the CUDA torch was built for), read from the package metadata without importing
// torch (a probe must cost well under a second, not an import of torch: 6-9 s on a GPU machine). A
// nightly series is split where the workload's stack changes; a bump of tunebench or its Node.js is the
// harness's, not the workload's (history/index.ts environmentKey).
import { execFileSync } from 'node:child_process';
import { basename } from 'node:path';
import { z } from 'zod';
import type { WorkloadStack } from '../domain/telemetry.js';

/** The packages whose versions split a series. */
export const STACK_PACKAGES = ['torch', 'numpy'] as const;

/** The probe's limit: the metadata read takes tens of milliseconds; a hung interpreter must not stall a run. */
const PROBE_TIMEOUT_MS = 15_000;

/**
 * Prints one JSON object: the interpreter's version, each package's version (null when absent) and
 * torch's CUDA version from its version.py, read as text (null for a CPU build, absent torch or none found).
 */
const PROBE = `
import json, platform, re, importlib.metadata as md, importlib.util as iu
def version(name):
    try:
        return md.version(name)
    except Exception:
        return None
cuda = None
try:
    spec = iu.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        import os
        path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
        with open(path) as f:
            m = re.search(r"^cuda\\s*(?::[^=]*)?=\\s*['\\"]([^'\\"]+)['\\"]", f.read(), re.M)
        cuda = m.group(1) if m else None
except Exception:
    cuda = None
print(json.dumps({"python": platform.python_version(), "packages": {n: version(n) for n in ${JSON.stringify(STACK_PACKAGES)}}, "cuda": cuda}))
`;

const probeSchema = z.object({
  python: z.string().max(64),
  packages: z.record(z.string(), z.string().max(128).nullable()),
  cuda: z.string().max(64).nullable(),
});

/** Whether `command` (a program path or name) is a Python interpreter: python, python3, python3.12. */
export function isPython(command: string): boolean {
  return /^python(\d+(\.\d+)?)?$/.test(basename(command));
}

/**
 * The stack of the interpreter `python` (as its probe reports it, checked by a schema), or null when it
 * cannot be read: a missing interpreter, a timeout, output that is not the probe's.
 */
export function workloadStack(python: string): WorkloadStack | null {
  let out: string;
  try {
    // Not isolated (-I): a user's site-packages and PYTHONPATH are where the workload finds its torch too. From
    // /, so that no module of the current folder shadows the probe's imports.
    out = execFileSync(python, ['-c', PROBE], {
      cwd: '/',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: PROBE_TIMEOUT_MS,
      maxBuffer: 64 * 1024,
    }).toString();
  } catch {
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(out.trim().split('\n').at(-1) ?? '');
  } catch {
    return null;
  }
  const r = probeSchema.safeParse(parsed);
  if (!r.success) return null;
  const packages: Record<string, string> = {};
  for (const name of STACK_PACKAGES) {
    const v = r.data.packages[name];
    if (typeof v === 'string') packages[name] = v;
  }
  return { interpreter: python, python: r.data.python, packages, cuda: r.data.cuda };
}
