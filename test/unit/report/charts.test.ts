// Chart builders against a known journal (test/fixtures/runs/report-fixture): every spec compiles
// with vega-lite without a warning, renders to SVG with the expected marks, and matches its snapshot.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stageCharts, type Chart } from '../../../harness/report/charts/index.js';
import { compileSpec, renderSvg } from '../../../harness/report/render.js';
import { FIXTURES } from '../../support/paths.js';
import { REPORT_FIXTURE, resultOf } from '../../support/runs.js';
import { countMarks } from '../../support/svg.js';
import { readRunDir } from '../../../harness/experiment/run-file.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';

const RUN = REPORT_FIXTURE;
const SNAPSHOTS = join(FIXTURES, 'snapshots');
const { run, records } = readRunDir(RUN);
const stages = run.result!.stages;
const charts: Chart[] = stages.flatMap((s) => stageCharts(s, records, STAGE_KIND_MODULES));
const byName = (name: string) => charts.find((c) => c.name === name)!;

describe('chart builders on a known journal', () => {
  it('builds the expected charts: one per stage kind plus telemetry', () => {
    assert.deepEqual(
      charts.map((c) => c.name),
      [
        'max-batch-max-batch-1',
        'telemetry-max-batch-1',
        'sweep-threads-heatmap',
        'sweep-threads-ranked',
        'telemetry-threads',
        'compare-arena',
        'telemetry-arena',
      ],
    );
    for (const c of charts) assert.equal(c.spec['$schema'], 'https://vega.github.io/schema/vega-lite/v6.json');
  });

  it('every spec compiles with vega-lite without warnings', async () => {
    for (const c of charts) assert.deepEqual((await compileSpec(c.spec)).warnings, [], c.name);
  });

  it('renders to SVG with one mark per probe, arm, config and series', async () => {
    const mb = resultOf(stages[0], 'max-batch');
    const own = records.filter((r) => r.stage === stages[0]!.name);
    const svg = await renderSvg(byName('max-batch-max-batch-1').spec);
    assert.equal(
      countMarks(svg, 'concat_0_layer_0_marks'),
      own.filter((r) => r.outcome === 'ok').length,
      'a point per successful probe',
    );
    assert.equal(
      countMarks(svg, 'concat_0_layer_1_marks'),
      own.filter((r) => r.outcome !== 'ok').length,
      'a cross per failed probe',
    );
    assert.equal(
      countMarks(svg, 'concat_0_layer_3_marks'),
      [mb.max, mb.recommended, mb.fastest].filter((v) => v !== null).length,
      'max, recommended and fastest labelled',
    );
    assert.equal(countMarks(svg, 'concat_1_layer_1_layer_0_marks'), 1, 'the cap as a rule');

    const cmp = resultOf(stages[2], 'compare');
    const csvg = await renderSvg(byName('compare-arena').spec);
    assert.equal(countMarks(csvg, 'concat_0_layer_1_marks'), cmp.arms.length, 'a median per arm');
    assert.equal(countMarks(csvg, 'concat_0_layer_0_marks'), cmp.arms.length, 'a CI per arm');
    assert.equal(
      countMarks(csvg, 'concat_2_layer_2_layer_1_marks'),
      2 * (cmp.arms.length - 1),
      'throughput and memory ratios of each non-baseline arm',
    );
    assert.equal(countMarks(csvg, 'concat_2_layer_1_marks'), 1, 'the rule at 1');

    const ranked = await renderSvg(byName('sweep-threads-ranked').spec);
    assert.equal(countMarks(ranked, 'layer_1_marks'), 2);
    const heat = await renderSvg(byName('sweep-threads-heatmap').spec);
    assert.equal(countMarks(heat, 'layer_0_marks'), 2);
    const tel = await renderSvg(byName('telemetry-arena').spec);
    assert.equal((tel.match(/class="mark-line role-mark/g) ?? []).length, 2, 'a utilisation panel and a memory panel');
  });

  it('specs match their snapshots (UPDATE_SNAPSHOTS=1 rewrites them)', () => {
    for (const c of charts) {
      const file = join(SNAPSHOTS, `${c.name}.vl.json`);
      const text = `${JSON.stringify(c.spec, null, 2)}\n`;
      if (process.env['UPDATE_SNAPSHOTS'] === '1' || !existsSync(file)) {
        if (process.env['CI'] === 'true')
          assert.fail(`snapshot ${file} is missing; run UPDATE_SNAPSHOTS=1 npm test locally and commit it`);
        writeFileSync(file, text);
      }
      assert.equal(
        text,
        readFileSync(file, 'utf8'),
        `${c.name} changed; if intended, run UPDATE_SNAPSHOTS=1 npm test and commit`,
      );
    }
  });
});

describe('telemetry chart with a GPU', () => {
  it('adds GPU utilisation and memory series when nvidia-smi was sampled', async () => {
    const { telemetryChart } = await import('../../../harness/report/charts/telemetry.js');
    const trial = records.find((r) => r.outcome === 'ok' && r.telemetry.series.t.length > 1)!;
    const t = trial.telemetry.series.t;
    const gpu = {
      index: 0,
      name: 'NVIDIA A100-SXM4-40GB',
      t,
      utilization_pct: t.map((_, i) => (i % 2 ? 97 : null)),
      memory_used_bytes: t.map(() => 30 * 2 ** 30),
      power_watts: t.map(() => 250),
      sm_clock_mhz: t.map(() => 1410),
      memory_total_bytes: 40 * 2 ** 30,
    };
    const chart = telemetryChart('s', {
      ...trial,
      telemetry: { ...trial.telemetry, series: { ...trial.telemetry.series, gpus: [gpu] } },
    })!;
    const values = (chart.spec['data'] as { values: { series: string; value: number | null }[] }).values;
    assert.deepEqual([...new Set(values.map((v) => v.series))].sort(), [
      'CPU of the process tree (% of one core)',
      'GPU 0 %',
      'GPU 0 memory',
      'RSS of the process tree',
    ]);
    assert.ok(
      values.some((v) => v.series === 'GPU 0 %' && v.value === null),
      '[N/A] readings stay gaps, not zeros',
    );
    assert.deepEqual((await compileSpec(chart.spec)).warnings, []);
    const svg = await renderSvg(chart.spec);
    assert.match(svg, /GPU 0 memory/);
  });
});
