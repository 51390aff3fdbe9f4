// report.html: one self-contained page (inline SVG charts, tables, the chosen config, the
// environment, warnings, links to the raw files). No script, no network request: the
// Content-Security-Policy allows inline styles and nothing else, and every string from the
// experiment, the workload or the environment is escaped.
import type { ReportKinds } from './kinds.js';
import { warningText } from './warnings.js';
import { stageFailureSentence } from './stage-failure.js';
import { formatSeconds } from '../experiment/units.js';
import type { Chart } from './charts/index.js';
import { figure, interval } from './format.js';
import { stageSection, type Block } from './tables.js';
import type { TrialRecord } from '../domain/index.js';
import type { RunResult } from '../experiment/run-file.js';

export const REPORT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** Control characters other than tab, LF and CR (C0, DEL, C1), and the non-characters U+FFFE and U+FFFF. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g;

/**
 * Escapes text for HTML element content and double-quoted attribute values; control characters
 * (a workload's ESC or BEL) show as `\x1b`, never raw.
 */
export function esc(text: string): string {
  return text
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
    .replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export interface RenderedChart {
  chart: Chart;
  /** Null when the chart had nothing to draw. */
  svg: string | null;
  /** Parts left out for lack of finite values (see charts/prune.ts). */
  omitted?: readonly string[];
  /** Not drawn in this process (its spec is written): `tunebench report <dir>` draws it. */
  deferred?: true;
  stage: string;
}

export interface ReportPage {
  result: RunResult;
  records: readonly TrialRecord[];
  charts: readonly RenderedChart[];
  environment: unknown;
  /** Raw files to link, relative to the run directory. */
  files: readonly string[];
  /** The report parts of every stage kind. */
  kinds: ReportKinds;
}

export const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 12px; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; } tr.chosen td { background: #eef6ee; font-weight: 600; }
figure { margin: 1rem 0; overflow-x: auto; } figcaption { font-size: 12px; color: #555; }
pre { background: #f7f7f7; padding: .5rem; overflow-x: auto; font-size: 12px; }
.warn { background: #fff4e5; border-left: 4px solid #f0a020; padding: .4rem .8rem; }
.answer { border-left: 4px solid #4a8a4a; padding: .1rem .8rem; margin: .5rem 0 1rem; } .answer > p:first-child { font-size: 15px; }
code { background: #f3f3f3; padding: 0 3px; }
`;

export function reportHtml(page: ReportPage): string {
  const r = page.result;
  const out: string[] = [];
  out.push('<!doctype html>', '<html lang="en">', '<head>', '<meta charset="utf-8">');
  out.push(`<meta http-equiv="Content-Security-Policy" content="${esc(REPORT_CSP)}">`);
  out.push('<meta name="viewport" content="width=device-width, initial-scale=1">');
  out.push(`<title>tunebench: ${esc(r.experiment)}</title>`, `<style>${STYLE}</style>`, '</head>', '<body>');
  out.push(`<h1>tunebench: ${esc(r.experiment)}</h1>`);
  const outcomes = Object.entries(r.trials.by_outcome)
    .filter(([, n]) => n > 0)
    .map(([o, n]) => `${figure(n)} ${o}`)
    .join(', ');
  out.push(
    `<p>Run <code>${esc(r.run_id)}</code> on ${esc(r.environment)}: ` +
      `${esc(figure(r.trials.total))} trials (${esc(outcomes)}) in ${esc(figure(r.wall_seconds, formatSeconds))}.</p>`,
  );
  if (r.stopped) {
    const s = r.stopped;
    out.push(
      '<h2 id="partial">Partial report</h2>',
      `<p class="warn">This run did not finish: ${esc(s.reason)}, ` +
        `during stage ${esc(s.stage)} after ${esc(figure(s.stage_trials))} of its trials ` +
        `(${esc(figure(s.completed_trials))} completed trials in all, kept in the journal). ` +
        `Only the stages that finished are shown. Resume with: <code>${esc(s.resume)}</code></p>`,
    );
  }
  if (r.stage_failures?.length)
    out.push(
      '<h2 id="failed">Failed</h2>',
      ...r.stage_failures.map((f) => `<p class="warn">${esc(stageFailureSentence(f))}</p>`),
    );
  if (r.warnings.length > 0)
    out.push('<h2 id="warnings">Warnings</h2>', ...r.warnings.map((w) => `<p class="warn">${esc(warningText(w))}</p>`));
  out.push('<h2 id="chosen">Chosen config</h2>');
  out.push(
    htmlTable(
      ['parameter', 'value', 'why', 'samples/s [95% CI]', 'trials'],
      Object.entries(r.chosen).map(([k, v]) => {
        const e = r.evidence[k];
        const ci = interval(e?.samples_per_second, (x) => x.toFixed(1));
        const shown = ci !== '-' ? ci : figure(e?.point, (x) => `${x.toFixed(1)} (one trial: no CI)`);
        return [
          k,
          String(v),
          e?.rule ?? 'fixed by the experiment',
          shown,
          e ? e.trials.map((t) => figure(t)).join(', ') : '-',
        ];
      }),
      [],
    ),
  );
  for (const stage of r.stages) {
    // The answer first, then what may bias it, then the charts and every figure behind it.
    const section = stageSection(
      stage,
      page.records.filter((t) => t.stage === stage.name),
      page.kinds,
    );
    out.push(
      `<section class="stage" id="stage-${esc(stage.name)}">`,
      `<h2>Stage ${esc(stage.name)} (${esc(stage.kind)})</h2>`,
    );
    out.push('<div class="answer">', ...section.answer.map(htmlBlock), '</div>', ...section.warnings.map(htmlBlock));
    for (const c of page.charts.filter((x) => x.stage === stage.name)) out.push(chartFigure(c));
    out.push(...section.details.map(htmlBlock), '</section>');
  }
  out.push('<h2 id="environment">Environment</h2>', `<pre>${esc(JSON.stringify(page.environment, null, 2))}</pre>`);
  out.push(
    '<h2 id="files">Raw files</h2>',
    '<ul>',
    ...page.files.map((f) => `<li><a href="${esc(f)}">${esc(f)}</a></li>`),
    '</ul>',
  );
  out.push('</body>', '</html>', '');
  return out.join('\n');
}

function chartFigure(c: RenderedChart): string {
  const omitted = c.omitted ?? [];
  const left = omitted.length > 0 ? ` Left out for lack of finite values: ${omitted.join('; ')}.` : '';
  if (c.deferred)
    return (
      `<p>Chart ${esc(c.chart.title)} not drawn by this command, to keep its cost per invocation low ` +
      `(<a href="charts/${esc(c.chart.name)}.vl.json">Vega-Lite spec</a>): <code>tunebench report &lt;run directory&gt;</code> draws it into this page.</p>`
    );
  if (c.svg === null)
    return `<p class="warn">Chart ${esc(c.chart.title)} not drawn: it has no finite value to plot.${esc(left)}</p>`;
  return [
    `<figure class="chart" data-chart="${esc(c.chart.name)}">`,
    c.svg,
    `<figcaption>${esc(c.chart.title)} ` +
      `(<a href="charts/${esc(c.chart.name)}.vl.json">Vega-Lite spec</a>, ` +
      `<a href="charts/${esc(c.chart.name)}.svg">SVG</a>).${esc(left)}</figcaption>`,
    '</figure>',
  ].join('\n');
}

function htmlBlock(block: Block): string {
  if (block.kind === 'text') return `<p>${esc(block.text)}</p>`;
  if (block.kind === 'list') return ['<ul>', ...block.items.map((n) => `<li>${esc(n)}</li>`), '</ul>'].join('\n');
  if (block.kind === 'warning') return `<p class="warn">${esc(block.text)}</p>`;
  return htmlTable(block.table.headers, block.table.rows, block.table.highlight);
}

export function htmlTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  highlight: readonly number[],
): string {
  const head = `<tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>`;
  const body = rows.map(
    (row, i) =>
      `<tr${highlight.includes(i) ? ' class="chosen"' : ''}>${row.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`,
  );
  return ['<table>', head, ...body, '</table>'].join('\n');
}
