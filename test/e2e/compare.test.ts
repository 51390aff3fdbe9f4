// `tunebench compare`: before/after ratios with CIs and verdicts, environment warnings, and the
// documented exit code for a significant regression.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import type { BeforeAfter } from '../../harness/analysis/compare-runs.js';
import { CLI, tempDir } from '../support/paths.js';
import { REPORT_FIXTURE as RUN, slowerCopy } from '../support/runs.js';

describe('tunebench compare', () => {
  it('calls a 1.5x slowdown slower with a CI below 1, the rest unchanged, and exits 3 past the threshold', async () => {
    const after = slowerCopy(1.5, 'Another CPU 9000');
    const out = tempDir();
    const r = await execa(
      process.execPath,
      [CLI, 'compare', RUN, after, '--out', out, '--json', '--fail-on-regression', '10'],
      { reject: false },
    );
    assert.equal(r.exitCode, 3, r.stderr);
    const cmp = JSON.parse(r.stdout) as BeforeAfter & { regressions: string[] };
    const arena = cmp.metrics.filter((m) => m.stage === 'arena');
    assert.equal(arena.length, 2);
    for (const m of arena) {
      assert.equal(m.verdict, 'slower');
      assert.ok(Math.abs(m.throughput_ratio!.estimate - 1 / 1.5) < 1e-6);
      assert.ok(m.throughput_ratio!.high < 0.9);
      assert.equal(m.memory_verdict, 'no significant difference');
    }
    for (const m of cmp.metrics.filter((x) => x.stage !== 'arena'))
      assert.equal(m.verdict, 'no significant difference', m.metric);
    assert.deepEqual(cmp.regressions.sort(), arena.map((m) => m.metric).sort());
    assert.match(cmp.environment_warnings.join('\n'), /CPU differs: .*Another CPU 9000/);
    assert.match(r.stderr, /regression beyond 10%: arena/);
    const html = readFileSync(join(out, 'compare.html'), 'utf8');
    assert.match(html, /Content-Security-Policy/);
    assert.match(html, /environment: CPU differs/);
    assert.match(
      readFileSync(join(out, 'compare.md'), 'utf8'),
      /\| arena arena=keep batch\\_size=\d+ \| 5 \/ 5 \| -33\.3%/,
    );
    JSON.parse(readFileSync(join(out, 'charts', 'before-after.vl.json'), 'utf8'));
  });

  it('exits 0 without --fail-on-regression, and when the slowdown is within the threshold', async () => {
    const after = slowerCopy(1.5);
    const stepSummary = join(tempDir(), 'summary.md');
    const plain = await execa(process.execPath, [CLI, 'compare', RUN, after, '--out', tempDir()], {
      reject: false,
      env: { GITHUB_STEP_SUMMARY: stepSummary },
    });
    assert.match(readFileSync(stepSummary, 'utf8'), /^# tunebench compare: report-fixture/);
    assert.equal(plain.exitCode, 0, plain.stderr);
    const m = /(\d+) shared metrics: 0 faster, 2 slower, (\d+) no significant difference/.exec(plain.stdout);
    assert.ok(m && Number(m[1]) === Number(m[2]) + 2, plain.stdout);
    const lenient = await execa(
      process.execPath,
      [CLI, 'compare', RUN, after, '--out', tempDir(), '--fail-on-regression', '50'],
      { reject: false },
    );
    assert.equal(lenient.exitCode, 0, lenient.stderr);
  });

  it('rejects a bad threshold and a folder that is not a run', async () => {
    const r = await execa(process.execPath, [CLI, 'compare', RUN, RUN, '--fail-on-regression', 'ten'], {
      reject: false,
    });
    assert.equal(r.exitCode, 2);
    assert.match(r.stderr, /--fail-on-regression: expected a percentage/);
    const missing = await execa(process.execPath, [CLI, 'compare', RUN, tempDir()], { reject: false });
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /not a run directory/);
  });
});
