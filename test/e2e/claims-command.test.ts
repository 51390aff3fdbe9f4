// `tunebench claims <dir>`: every file run, one verdict table, a broken file reported without stopping the rest.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, PROGRAMS, ROOT, tempDir } from '../support/paths.js';

describe('tunebench claims', () => {
  it('prints a verdict table for a folder of claim experiments and flags an invalid file', async () => {
    const dir = tempDir();
    // Simulated step times: "confirmed" must come out on a loaded machine too (a real 2.5x there can read
    // [1.92, 3.02], an honest "inconclusive" that this test is not about).
    const work = join(PROGRAMS, 'simulated-steps.mjs');
    writeFileSync(
      join(dir, 'a-known.yaml'),
      [
        'name: known',
        'workload: { kind: command, command: [node, ' +
          JSON.stringify(work) +
          '], protocol: required, params: { batch_size: 1, step_ms: 2 } }',
        'measure: { warmup_steps: 2, steps: 8 }',
        'stages:',
        '  - { kind: claim, name: half, claim: "2-3x", baseline: { work: 2.5 }, candidate: { work: 1 } }',
        '  - { kind: claim, name: gpu, claim: "2x", requires: cuda, baseline: { work: 1 }, candidate: { work: 0.5 } }',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'b-broken.yaml'),
      'name: broken\nworkload: { kind: command, command: [x] }\n' +
        'stages: [{ kind: claim, claim: "faster", candidate: { a: 1 } }]\n',
    );
    writeFileSync(join(dir, 'notes.txt'), 'not an experiment');
    const out = tempDir();
    const r = await execa(process.execPath, [CLI, 'claims', dir, '--max-pairs', '8', '--out', out, '--quiet'], {
      reject: false,
    });
    assert.equal(r.exitCode, 2, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], '| file | claim | change | measured speedup [95% CI] | verdict |');
    assert.match(r.stdout, /\| a-known\.yaml \| 2-3x \| work 2\.5 → 1 \| 2\.\d\dx \[[\d.]+, [\d.]+\] \| confirmed \|/);
    assert.match(r.stdout, /\| a-known\.yaml \| 2x \| work 1 → 0\.5 \| - \| skipped: needs CUDA \|/);
    assert.match(r.stdout, /\| b-broken\.yaml \| - \| - \| - \| invalid \|/);
    assert.doesNotMatch(r.stdout, /notes\.txt/);
    const verdicts = readFileSync(join(out, 'claims', 'verdicts.md'), 'utf8');
    assert.match(verdicts, /b-broken\.yaml -: .*claim "faster": not a number followed by "x" or "%"/);
  });

  it('rejects a folder without experiment files and a bad --max-pairs', async () => {
    const empty = await execa(process.execPath, [CLI, 'claims', tempDir()], { reject: false });
    assert.equal(empty.exitCode, 2);
    assert.match(empty.stderr, /has no experiment files/);
    const bad = await execa(
      process.execPath,
      [CLI, 'claims', join(ROOT, 'experiments', 'claims'), '--max-pairs', '0'],
      { reject: false },
    );
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /--max-pairs: expected a positive integer/);
  });
});
