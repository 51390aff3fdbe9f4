// The claim stage end to end on a workload whose effects are simulated (test/fixtures/programs/simulated-steps.mjs):
// each verdict must come out the same on a loaded machine. Real processes under contention: verdicts.test.ts.
import { roleText } from '../../harness/domain/index.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, FIXTURES, tempDir } from '../support/paths.js';
import { journal, runDir } from '../support/runs.js';
import type { ClaimSummary } from '../../harness/domain/index.js';

describe('claim stage', () => {
  it(
    'confirms a planted 2.5x against "2-3x"; ' + '"5-10x" and an A/A "30-50% faster" fall short; skips a CUDA claim',
    async () => {
      const out = tempDir();
      const r = await execa(
        process.execPath,
        [CLI, 'run', join(FIXTURES, 'experiments', 'claims-simulated.yaml'), '--out', out],
        { reject: false, env: { SLURM_CPUS_PER_TASK: '' } },
      );
      assert.equal(r.exitCode, 0, r.stderr);
      const dir = runDir(out, 'claims-simulated');
      const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
        result: { stages: { name: string; result: ClaimSummary }[] };
      };
      const by = Object.fromEntries(run.result.stages.map((s) => [s.name, s.result]));
      assert.equal(by['planted']!.verdict, 'confirmed', by['planted']!.reason);
      assert.ok(by['planted']!.speedup!.low >= 2 && by['planted']!.speedup!.high <= 3);
      assert.ok(by['planted']!.p! < 0.05);
      assert.equal(by['refuted']!.verdict, 'falls short', by['refuted']!.reason);
      assert.equal(by['aa']!.verdict, 'falls short', by['aa']!.reason);
      assert.ok(by['aa']!.speedup!.low < 1.3);
      assert.equal(by['aa']!.candidate['label'], availableParallelism(), '"{cpus}" scales to the machine');
      // Two different commands, judged on whole-process time.
      assert.equal(by['two-commands']!.verdict, 'confirmed', by['two-commands']!.reason);
      assert.match(
        by['two-commands']!.sentence,
        /`node .*simulated-steps\.mjs --work=2\.5`.* -> `node .*simulated-steps\.mjs --work=1`.*whole-process time/,
      );
      const argvs = journal(dir)
        .filter((t) => t.stage === 'two-commands')
        .map((t) => t.argv?.at(-1));
      assert.deepEqual(argvs.slice(0, 4), ['--work=2.5', '--work=1', '--work=1', '--work=2.5']);
      assert.equal(by['gpu']!.verdict, 'skipped');
      assert.match(by['gpu']!.reason, /needs CUDA/);
      assert.equal(by['gpu']!.trials.candidate.length, 0, 'a skipped claim runs nothing');
      // One sentence: the claim, the measurement, the environment and the verdict.
      assert.match(
        by['planted']!.sentence,
        /^Claim "2-3x" \(work=2.5 -> work=1, throughput, claimed 2x to 3x\): measured [\d.]+x \[[\d.]+, [\d.]+\] on .*cores.*: confirmed/,
      );
      // Pairs alternate their order: A B, B A, A B ...
      const roles = journal(dir)
        .filter((t) => t.stage === 'planted')
        .map((t) => roleText(t.role));
      assert.deepEqual(roles.slice(0, 6), [
        'baseline pair 1',
        'candidate pair 1',
        'candidate pair 2',
        'baseline pair 2',
        'baseline pair 3',
        'candidate pair 3',
      ]);
      assert.equal(roles.length, 2 * by['planted']!.pairs);
      assert.ok(by['planted']!.pairs >= 5, 'min_pairs before the first decision');
      assert.ok([5, 7, 10, 14, 20].includes(by['planted']!.pairs), 'decisions only at the planned looks');
      const md = readFileSync(join(dir, 'summary.md'), 'utf8');
      assert.match(md, /\| 2-3x \| 2\.00x to 3\.00x \| /);
      assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /data-chart="claim-planted"/);
    },
  );
});
