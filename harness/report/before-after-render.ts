// compare.html and compare.md of a before/after comparison.
import { fmtPct } from './format.js';
import type { BeforeAfter } from '../analysis/compare-runs.js';
import type { Chart } from './charts/spec.js';
import { figure, interval } from './format.js';
import { esc, htmlTable, REPORT_CSP, STYLE } from './html.js';
import { code, md, table } from './markdown.js';
import type { Interval } from '../domain/index.js';

const ci = (i: Interval | null) => interval(i, fmtPct);
const band = (cmp: BeforeAfter) => figure(cmp.noise_band, (v) => (v * 100).toFixed(1));

function metricRows(cmp: BeforeAfter): string[][] {
  return cmp.metrics.map((m) => [
    m.metric,
    `${figure(m.trials.before)} / ${figure(m.trials.after)}`,
    ci(m.throughput_ratio),
    m.verdict,
    ci(m.memory_ratio),
    m.memory_verdict,
  ]);
}
const METRIC_HEADERS = [
  'metric',
  'trials before / after',
  'throughput after vs before',
  'verdict',
  'peak memory after vs before',
  'memory',
];
const CHOSEN_HEADERS = ['parameter', 'before', 'after', ''];
const chosenRows = (cmp: BeforeAfter) =>
  cmp.chosen.map((c) => [
    c.param,
    c.before === null ? '-' : String(c.before),
    c.after === null ? '-' : String(c.after),
    c.changed ? 'changed' : '',
  ]);

export function beforeAfterHtml(
  cmp: BeforeAfter,
  chart: { chart: Chart; svg: string } | null,
  regressionNote: string | null,
): string {
  const title =
    `tunebench compare: ${cmp.before.experiment} ${cmp.before.run_id} -> ` +
    `${cmp.after.experiment} ${cmp.after.run_id}`;
  const out: string[] = ['<!doctype html>', '<html lang="en">', '<head>', '<meta charset="utf-8">'];
  out.push(
    `<meta http-equiv="Content-Security-Policy" content="${esc(REPORT_CSP)}">`,
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
  );
  out.push(`<h1>${esc(title)}</h1>`);
  out.push(
    `<p>Before: <code>${esc(cmp.before.run_id)}</code> (${esc(cmp.before.experiment)}). ` +
      `After: <code>${esc(cmp.after.run_id)}</code> (${esc(cmp.after.experiment)}). ` +
      `A change counts when the 95% CI of the ratio lies outside +/-${band(cmp)}%.</p>`,
  );
  for (const w of [...cmp.environment_warnings.map((w) => `environment: ${w}`), ...cmp.warnings])
    out.push(`<p class="warn">${esc(w)}</p>`);
  if (regressionNote) out.push(`<p class="warn">${esc(regressionNote)}</p>`);
  out.push('<h2>Shared metrics</h2>');
  if (chart)
    out.push(
      `<figure class="chart" data-chart="${esc(chart.chart.name)}">`,
      chart.svg,
      `<figcaption>${esc(chart.chart.title)} ` +
        `(<a href="charts/${esc(chart.chart.name)}.vl.json">Vega-Lite spec</a>)</figcaption>`,
      '</figure>',
    );
  out.push(htmlTable(METRIC_HEADERS, metricRows(cmp), []));
  out.push(
    '<h2>Chosen configs</h2>',
    htmlTable(
      CHOSEN_HEADERS,
      chosenRows(cmp),
      cmp.chosen.flatMap((c, i) => (c.changed ? [i] : [])),
    ),
  );
  out.push('</body>', '</html>', '');
  return out.join('\n');
}

export function beforeAfterMarkdown(cmp: BeforeAfter, regressionNote: string | null): string {
  const out = [
    `# tunebench compare: ${md(cmp.before.experiment)} ${code(cmp.before.run_id)} -> ${code(cmp.after.run_id)}`,
    '',
  ];
  for (const w of [...cmp.environment_warnings.map((w) => `environment: ${w}`), ...cmp.warnings])
    out.push(`> **Warning:** ${md(w)}`, '');
  if (regressionNote) out.push(`> **${md(regressionNote)}**`, '');
  out.push(`A change counts when the 95% CI of the ratio lies outside +/-${band(cmp)}%.`, '');
  out.push(
    table(
      METRIC_HEADERS,
      metricRows(cmp).map((r) => r.map(md)),
    ),
    '',
    '## Chosen configs',
    '',
    table(
      CHOSEN_HEADERS,
      chosenRows(cmp).map((r) => r.map(md)),
    ),
    '',
  );
  return out.join('\n');
}
