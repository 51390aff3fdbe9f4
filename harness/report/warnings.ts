// A run's typed warnings as sentences: the one place they are worded (run.json keeps the facts).
import { formatBytes } from '../experiment/units.js';
import type { RunWarning } from '../domain/index.js';

/** The sentence of a run warning, for the terminal, summary.md and report.html. */
export function warningText(w: RunWarning): string {
  switch (w.kind) {
    case 'no-memory-cap':
      return 'no memory cap was enforced (limits.memory unset or mechanism "none")';
    case 'address-space-too-small':
      return (
        `stage ${w.stage}: nothing fit under the ${formatBytes(w.cap_bytes)} address-space cap; ` +
        'Node.js and ONNX Runtime alone reserve about 1.2 GB of address space under prlimit --as, ' +
        'so raise limits.memory'
      );
    case 'tree-over-cap':
      return (
        `${w.trials} trial(s) held more memory across their processes than the ${formatBytes(w.cap_bytes)} cap ` +
        `(peak ${formatBytes(w.peak_bytes)}, e.g. trial ${w.first_trial}): prlimit caps each process's address ` +
        'space, not the process tree, so worker processes each get the whole cap; use limits.mechanism: cgroup ' +
        'to cap the tree'
      );
    case 'reports-not-written':
      return (
        `the reports could not be written (${w.error}); every trial is in the journal: fix the cause, then ` +
        `write them with: tunebench report ${JSON.stringify(w.run_dir)}`
      );
    case 'note':
      return w.source === 'slurm' ? `slurm: ${w.text}` : w.text;
  }
}
