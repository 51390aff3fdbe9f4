// history.md and history.html of one experiment: the gate (latest run vs baseline), the change points,
// the latest value of each key metric, and chosen-config changes; the trend chart inline in the HTML.
import type { Chart } from '../report/charts/spec.js';
import { esc, htmlTable, REPORT_CSP, STYLE } from '../report/html.js';
import { code, md, table } from '../report/markdown.js';
import type { ExperimentHistory } from './trend.js';

const num = (v: number | null) => (v === null ? '-' : v >= 100 ? v.toFixed(0) : v.toPrecision(3));
const pct = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

/** Findings as lines: what fails the gate first, then what is worth knowing. */
export function findings(h: ExperimentHistory, thresholdPct: number | null): string[] {
  const out: string[] = [];
  const g = h.gate;
  if (g?.baseline) {
    const against = `${g.baseline.pinned ? 'pinned baseline' : 'previous run'} ${g.baseline.run_id}`;
    if (g.env_mismatch) out.push(`ENVIRONMENT MISMATCH (allowed by --allow-env-mismatch): the baseline ran elsewhere: ${g.env_mismatch.join('; ')}`);
    for (const r of g.regressions) {
      const ci = r.throughput_ratio!;
      out.push(`REGRESSION: ${r.metric} is ${pct(ci.estimate)} [${pct(ci.low)}, ${pct(ci.high)}] vs ${against}${thresholdPct !== null ? ` (beyond ${thresholdPct}%)` : ''}`);
    }
    for (const c of g.config_changes) out.push(`CONFIG CHANGE: ${c.param} ${String(c.before)} -> ${String(c.after)} vs ${against}`);
    if (g.regressions.length === 0 && g.config_changes.length === 0) out.push(`latest run ${g.latest.run_id}: no significant regression and the same chosen config vs ${against}`);
  }
  for (const n of g?.notes ?? []) out.push(n);
  for (const m of h.metrics) for (const c of m.changes) out.push(`change point: ${m.name} ${pct(c.ratio)} (${num(c.before)} -> ${num(c.after)} ${m.unit}) at run ${c.run_id} (${c.started_at}, night ${c.index + 1} of ${m.points.length})`);
  return out;
}

function latestRows(h: ExperimentHistory): string[][] {
  return h.metrics.map((m) => {
    const p = m.points.at(-1)!;
    const ci = p.low !== null && p.high !== null ? ` [${num(p.low)}, ${num(p.high)}]` : '';
    return [m.name, `${num(p.value)}${ci} ${m.unit}`, String(m.points.length), m.changes.map((c) => `${pct(c.ratio)} at ${c.run_id}`).join('; ') || 'none', m.env_key];
  });
}
const LATEST_HEADERS = ['metric', 'latest [95% CI]', 'runs', 'change points', 'environment'];

function chosenRows(h: ExperimentHistory): string[][] {
  return h.chosen.flatMap((c) => c.changes.map((x) => [c.param, String(x.before), String(x.after), x.run_id, c.env_key]));
}
const CHOSEN_HEADERS = ['parameter', 'before', 'after', 'from run', 'environment'];

export function historyMarkdown(h: ExperimentHistory, thresholdPct: number | null): string {
  const out = [`# tunebench history: ${md(h.experiment)}`, ''];
  out.push(`${h.runs} finished runs in ${h.environments.length} environment(s): ${h.environments.map((e) => `${code(e.env_key)} ${md(e.env_label)} (${e.runs} runs)`).join('; ')}.`, '');
  out.push(...findings(h, thresholdPct).map((f) => `- ${/^(REGRESSION|CONFIG CHANGE|ENVIRONMENT)/.test(f) ? `**${md(f)}**` : md(f)}`), '');
  out.push('## Key metrics', '', table(LATEST_HEADERS, latestRows(h).map((r) => r.map(md))), '');
  const chosen = chosenRows(h);
  out.push('## Chosen config changes', '', chosen.length > 0 ? table(CHOSEN_HEADERS, chosen.map((r) => r.map(md))) : 'The chosen config never changed.', '');
  return out.join('\n');
}

export function historyHtml(h: ExperimentHistory, chart: { chart: Chart; svg: string }, thresholdPct: number | null): string {
  const title = `tunebench history: ${h.experiment}`;
  const out = ['<!doctype html>', '<html lang="en">', '<head>', '<meta charset="utf-8">'];
  out.push(`<meta http-equiv="Content-Security-Policy" content="${esc(REPORT_CSP)}">`, `<title>${esc(title)}</title>`, `<style>${STYLE}</style>`, '</head>', '<body>');
  out.push(`<h1>${esc(title)}</h1>`);
  out.push(`<p>${h.runs} finished runs in ${h.environments.length} environment(s): ${h.environments.map((e) => `<code>${esc(e.env_key)}</code> ${esc(e.env_label)} (${e.runs} runs)`).join('; ')}.</p>`);
  out.push('<h2 id="findings">Findings</h2>', '<ul>', ...findings(h, thresholdPct).map((f) => `<li${/^(REGRESSION|CONFIG CHANGE|ENVIRONMENT)/.test(f) ? ' class="warn"' : ''}>${esc(f)}</li>`), '</ul>');
  out.push('<h2 id="trend">Trend</h2>', `<figure class="chart" data-chart="${esc(chart.chart.name)}">`, chart.svg, `<figcaption>${esc(chart.chart.title)} (<a href="charts/${esc(chart.chart.name)}.vl.json">Vega-Lite spec</a>)</figcaption>`, '</figure>');
  out.push('<h2 id="metrics">Key metrics</h2>', htmlTable(LATEST_HEADERS, latestRows(h), []));
  const chosen = chosenRows(h);
  out.push('<h2 id="chosen">Chosen config changes</h2>', chosen.length > 0 ? htmlTable(CHOSEN_HEADERS, chosen, []) : '<p>The chosen config never changed.</p>');
  out.push('</body>', '</html>', '');
  return out.join('\n');
}
