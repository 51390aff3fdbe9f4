// The shipped pipeline experiment end to end: a race over data-loader settings on the real pipeline,
// run as the shipped file with fewer rounds and shorter trials (the full file is a user's run of
// minutes; the same pipeline, grid, constraints and race in half the time or less).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { stallFraction } from '../../harness/stats/throughput.js';
import { CLI, ROOT, tempDir } from '../support/paths.js';
import type { TrialRecord } from '../../harness/domain/index.js';

const SHIPPED = join(ROOT, 'experiments', 'onnx-pipeline.yaml');

/**
 * The shipped file with 3 rounds instead of 6 (3 trials a config: each gets its own t interval, and the
 * race's first look) and 24 timed steps instead of 48 (the stall is pooled over 6 trials a worker count).
 * Every other line is the shipped one; a change of either line in the shipped file fails here, loudly.
 */
function cheaperVariant(text: string): string {
  const edits: [RegExp, string][] = [
    [/^( {4}repeats: )6\b.*$/m, '3'],
    [/^( {2}steps: )48$/m, '24'],
  ];
  return edits.reduce((t, [re, value]) => {
    assert.match(t, re, `experiments/onnx-pipeline.yaml no longer has ${re}: update this test's variant`);
    return t.replace(re, (_line, key: string) => key + value);
  }, text);
}

describe('experiments/onnx-pipeline.yaml', () => {
  it('is valid as shipped', async () => {
    const r = await execa(process.execPath, [CLI, 'validate', SHIPPED], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /valid \(1 stage: sweep\)/);
  });

  it('runs, shows the stall falling with workers, and chooses with CI evidence', async () => {
    const out = tempDir();
    const experiment = join(out, 'onnx-pipeline.yaml');
    writeFileSync(experiment, cheaperVariant(readFileSync(SHIPPED, 'utf8')));
    const r = await execa(process.execPath, [CLI, 'run', experiment, '--out', out, '--json'], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    const result = JSON.parse(r.stdout) as {
      chosen: Record<string, unknown>;
      run_dir: string;
      stages: { result: { configs: { status: string; why?: string }[]; chosen_key: string } }[];
    };
    const dir = join(out, 'onnx-pipeline', readdirSync(join(out, 'onnx-pipeline'))[0]!);
    const records = readFileSync(join(dir, 'trials.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TrialRecord);

    // Stall fraction by worker count, over the one-thread configs that ran full-length trials.
    const stallFor = (w: number) => {
      const steps = records
        .filter((x) => x.outcome === 'ok' && x.config['num_workers'] === w && x.config['intra_op_threads'] === 1)
        .flatMap((x) => x.steps);
      return stallFraction(steps)!;
    };
    const [s0, s1, s2, s3] = [0, 1, 2, 3].map(stallFor) as [number, number, number, number];
    assert.ok(s0 > 0.5, `inline loading stalls: ${s0}`);
    assert.ok(s1 <= s0 + 0.05 && s2 < s1, `stall falls as workers are added: ${s0} ${s1} ${s2}`);
    assert.ok(s3 > s2 - 0.25, `a third worker on 2 cores gains little: ${s2} -> ${s3}`);
    assert.ok(
      records.every((x) => x.telemetry.series.t.length > 0 && x.telemetry.summary.cpu_cores !== null),
      'every trial has telemetry',
    );

    const stage = result.stages[0]!.result;
    assert.ok(
      stage.configs.some((c) => c.status === 'pruned' && /CPU budget/.test(c.why ?? '')),
      'the CPU budget pruned configs',
    );
    const chosen = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
      config: Record<string, unknown>;
      evidence: Record<string, { samples_per_second: { low: number; high: number }; rule: string; trials: number[] }>;
    };
    for (const p of ['num_workers', 'prefetch_factor', 'intra_op_threads']) {
      assert.equal(chosen.config[p], result.chosen[p]);
      const e = chosen.evidence[p]!;
      assert.ok(e.samples_per_second.low > 0 && e.samples_per_second.high >= e.samples_per_second.low, 'CI evidence');
      assert.ok(e.trials.length >= 1 && e.trials.every((i) => records[i]!.config[p] === chosen.config[p]));
    }
    assert.match(
      readFileSync(join(dir, 'summary.md'), 'utf8'),
      new RegExp(`\\*\\*${stage.chosen_key.replace(/_/g, '\\\\_')}\\*\\*`),
    );
  });
});
