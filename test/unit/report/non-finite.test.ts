// Reports of a run whose measurements are missing or non-finite (issue 15, item 8): a run.json written
// with Infinity holds null after JSON, and an older journal may hold anything. Every report shows
// "-" for such a value and never crashes on one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { beforeAfterHtml, beforeAfterMarkdown } from '../../../harness/report/before-after-render.js';
import type { BeforeAfter } from '../../../harness/analysis/compare-runs.js';
import { buildChosenConfig, writeChosenConfig } from '../../../harness/report/chosen-config.js';
import { reportHtml } from '../../../harness/report/html.js';
import { summaryMarkdown } from '../../../harness/report/summary-md.js';
import { fingerprint } from '../../../harness/telemetry/fingerprint.js';
import { tempDir } from '../../support/paths.js';
import { REPORT_FIXTURE } from '../../support/runs.js';
import type { TrialRecord } from '../../../harness/domain/index.js';
import { readRunDir, type RunResult } from '../../../harness/experiment/run-file.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';

/** Measured figures (not config values, not trial indices): where an overflow or a NaN can land. */
const MEASURED = new Set([
  'samples_per_second',
  'peakSamplesPerSecond',
  'stall_fraction',
  'trial_seconds',
  'wall_seconds',
  'p',
  'point',
  'seconds',
  'median',
  'p95',
  'peak_rss_bytes',
  'peak_limited_bytes',
  'peak_device_bytes',
  'noise_band',
]);

/** Replaces every measured figure with `v`, and each interval's estimate with `est` and bounds with `v`. */
function poison<T>(value: T, v: unknown, est: unknown): T {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (typeof x !== 'object' || x === null) return x;
    const o = x as Record<string, unknown>;
    const isInterval = 'estimate' in o && 'low' in o && 'high' in o;
    return Object.fromEntries(
      Object.entries(o).map(([k, y]) => {
        if (isInterval && k === 'estimate') return [k, est];
        if (isInterval && (k === 'low' || k === 'high')) return [k, v];
        if (MEASURED.has(k) && typeof y === 'number') return [k, v];
        return [k, walk(y)];
      }),
    );
  };
  return walk(value) as T;
}

const VARIANTS: [string, unknown, unknown][] = [
  ['null (Infinity after JSON)', null, null],
  ['Infinity', Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY],
  ['NaN', Number.NaN, Number.NaN],
  ['a finite estimate with NaN bounds', Number.NaN, 5],
  ['missing', undefined, undefined],
];

function assertClean(text: string, what: string): void {
  for (const word of ['Infinity', 'NaN', 'null', 'undefined'])
    assert.ok(!new RegExp(`\\b${word}\\b`).test(text), `${what} shows ${word}`);
}

describe('reports with missing or non-finite numbers', () => {
  const { run, records } = readRunDir(REPORT_FIXTURE);
  for (const [name, v, est] of VARIANTS) {
    it(`summary.md and report.html show "-" for ${name}`, () => {
      const result = poison<RunResult>(structuredClone(run.result!), v, est);
      const journal = poison<TrialRecord[]>(structuredClone(records), v, est);
      const markdown = summaryMarkdown(result, journal, STAGE_KIND_MODULES);
      const html = reportHtml({
        result,
        records: journal,
        charts: [],
        environment: {},
        files: [],
        kinds: STAGE_KIND_MODULES,
      });
      assertClean(markdown, 'summary.md');
      assertClean(html, 'report.html');
      assert.match(markdown, /\| - \|/);
      if (est === 5) assert.match(markdown, /5\.0 \\\[-, -\\\]/, 'the estimate, and "-" for each bound');
    });
  }

  it('compare.md and compare.html show "-" for non-finite ratios', () => {
    const ratio = { estimate: Number.POSITIVE_INFINITY, low: Number.NaN, high: Number.NaN, level: 0.95 };
    const cmp = {
      before: { experiment: 'e', run_id: 'a' },
      after: { experiment: 'e', run_id: 'b' },
      noise_band: Number.NaN,
      metrics: [
        {
          metric: 'm',
          trials: { before: 3, after: 3 },
          throughput_ratio: ratio,
          verdict: 'faster',
          memory_ratio: null,
          memory_verdict: '-',
        },
      ],
      chosen: [],
      environment_warnings: [],
      warnings: [],
    } as unknown as BeforeAfter;
    assertClean(beforeAfterMarkdown(cmp, null), 'compare.md');
    assertClean(beforeAfterHtml(cmp, null, null), 'compare.html');
  });

  it('chosen-config.json holds no interval with a non-finite or null bound', () => {
    const dir = tempDir();
    const evidence = {
      w: {
        stage: 's',
        rule: 'r',
        samples_per_second: { estimate: Number.POSITIVE_INFINITY, low: Number.NaN, high: Number.NaN, level: 0.95 },
        point: Number.POSITIVE_INFINITY,
        trials: [1],
      },
      v: { stage: 's', rule: 'r', samples_per_second: { estimate: 10, low: 9, high: 11, level: 0.95 }, trials: [2] },
    };
    writeChosenConfig(
      dir,
      buildChosenConfig({
        experiment: 'e',
        runId: 'r',
        config: { w: 1, v: 2 },
        evidence,
        fingerprint: fingerprint(),
        memoryLimit: null,
        experimentPath: 'x.yaml',
      }),
    );
    const json = JSON.parse(readFileSync(join(dir, 'chosen-config.json'), 'utf8')) as {
      evidence: Record<string, { samples_per_second: unknown; point?: unknown }>;
    };
    assert.equal(json.evidence['w']!.samples_per_second, null, 'no CI rather than a CI of nulls');
    assert.ok(!('point' in json.evidence['w']!));
    assert.deepEqual(json.evidence['v']!.samples_per_second, { estimate: 10, low: 9, high: 11, level: 0.95 });
  });
});
