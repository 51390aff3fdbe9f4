// The single-node SLURM cluster that the SLURM tests submit to: every suite that needs it starts it itself
// (test/slurm/cluster.sh is idempotent: a running cluster with the same configuration is left alone), so no
// suite depends on another having run first or on .ci/run having started it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { execa } from 'execa';
import { ROOT } from './paths.js';

/** Starts the cluster, or checks the running one; fails the calling test with the script's output. */
export async function startCluster(): Promise<void> {
  const up = await execa(join(ROOT, 'test', 'slurm', 'cluster.sh'), [], { reject: false });
  assert.equal(up.exitCode, 0, `test/slurm/cluster.sh failed:\n${up.stdout}\n${up.stderr}`);
}
