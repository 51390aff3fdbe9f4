// history.md and history.html of one experiment: the gate (latest run vs baseline), the change points,
// the latest value of each key metric, and chosen-config changes; the trend chart inline in the HTML.
import type { Chart } from '../report/charts/spec.js';
import { esc, htmlTable, REPORT_CSP, STYLE } from '../report/html.js';
import { code, md, table } from '../report/markdown.js';
import { NIGHTLY_DEFAULTS } from '../stats/nightly.js';
import { printedCommand } from '../util/shell.js';
import type { BisectHint, NoBisect } from './bisect-hint.js';
import { RUNS_PER_SECOND } from './index.js';
import type { Confirmation, GateTest, SeriesGate } from './series-gate.js';
import { seriesDecides, type ExperimentHistory } from './trend.js';

const num = (v: number | null) => (v === null ? '-' : v >= 100 ? v.toFixed(0) : v.toPrecision(3));
/** Runs/s (process-timed runs) also as the time of a run, which is what was measured. */
const perRun = (v: number, unit: string, wrap: (text: string) => string) =>
  unit === RUNS_PER_SECOND && v > 0 ? wrap(`${seconds(1 / v)} a run`) : '';
const seconds = (s: number) => (s < 1 ? `${num(s * 1000)} ms` : `${num(s)} s`);
const pct = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

/**
 * The line for an experiment that failed the regression gate: the ready `tunebench bisect` command
 * between the last good run and tonight's, or why there is none.
 */
export function bisectLine(experiment: string, hint: BisectHint): string {
  if (hint.available)
    return (
      `bisect ${experiment} (good: run ${hint.good.run_id}, bad: run ${hint.bad.run_id}): ` +
      printedCommand(['tunebench', ...hint.args])
    );
  return `no bisect command for ${experiment}: ${noBisectWhy(hint.why)}`;
}

function noBisectWhy(why: NoBisect): string {
  switch (why.kind) {
    case 'no-good-run':
      return 'the gate names no run from before the regression to start from';
    case 'unreadable':
      return `the run.json of run ${why.run.run_id} cannot be read: ${why.error}`;
    case 'no-commit':
      return `run ${why.run.run_id} records no git commit (run tunebench from a git checkout of the code it measures)`;
    case 'same-commit':
      return (
        `the last good run and tonight's both record commit ${why.commit.slice(0, 12)}: nothing to bisect ` +
        '(the change is elsewhere: the machine, the data, the experiment or uncommitted code)'
      );
    case 'not-command':
      return `the experiment's workload is "${why.workload}"; bisect measures a command workload (the repository's own program)`;
    case 'no-experiment-file': {
      const problem = {
        missing: 'is gone',
        'not-a-file': 'is not a file',
        'not-an-experiment-file': 'is not a .yaml, .yml or .json file (a one-liner: give bisect its command after --)',
      }[why.problem];
      return `the experiment file of tonight's run, ${why.file}, ${problem}`;
    }
    case 'no-repo':
      return (
        `run ${why.run.run_id} records its commit but not its repository (written by an earlier tunebench); ` +
        `in the repository: ${printedCommand(['tunebench', ...why.args])}`
      );
    case 'other-repo':
      return `the last good run and tonight's ran in different repositories (${why.good_repo}, ${why.bad_repo})`;
  }
}

/**
 * A finding of the history: an alarm (a regression, a config change, a baseline from elsewhere: what a
 * reader must see first, set in bold or red where printed) or a note. Typed here, turned into text only
 * where it is printed, so no renderer reads a finding's wording.
 */
export interface Finding {
  kind: 'regression' | 'config-change' | 'environment' | 'note';
  text: string;
}

const note = (text: string): Finding => ({ kind: 'note', text });

/** Whether a finding is an alarm rather than a note. */
export const alarming = (f: Finding): boolean => f.kind !== 'note';

/** Findings in order: what fails the gate first, then what is worth knowing. */
export function findings(h: ExperimentHistory, thresholdPct: number | null): Finding[] {
  const out: Finding[] = [];
  const g = h.gate;
  const series = g && seriesDecides(g) ? g.series : null;
  if (g?.baseline) {
    const against = `${g.baseline.pinned ? 'pinned baseline' : 'previous run'} ${g.baseline.run_id}`;
    if (g.env_mismatch)
      out.push({
        kind: 'environment',
        text:
          'ENVIRONMENT MISMATCH (allowed by --allow-env-mismatch): ' +
          `the baseline ran elsewhere: ${g.env_mismatch.join('; ')}`,
      });
    if (!series) {
      for (const r of g.regressions) {
        const ci = r.throughput_ratio!;
        out.push({
          kind: 'regression',
          text:
            `REGRESSION: ${r.metric} is ${pct(ci.estimate)} [${pct(ci.low)}, ${pct(ci.high)}] ` +
            `vs ${against}${thresholdPct !== null ? ` (beyond ${thresholdPct}%)` : ''}`,
        });
      }
    }
    for (const c of g.config_changes)
      out.push({
        kind: 'config-change',
        text: `CONFIG CHANGE: ${c.param} ${String(c.before)} -> ${String(c.after)} vs ${against}`,
      });
    for (const t of g.config_ties)
      out.push(
        note(
          `${t.param}: tied, kept ${t.param}=${String(t.before)} (tonight picked ${String(t.after)} among configs ` +
            `tied within the noise band: ${t.why}); not a config change`,
        ),
      );
    if (!series && g.regressions.length === 0 && g.config_changes.length === 0)
      out.push(
        note(`latest run ${g.latest.run_id}: no significant regression and the same chosen config vs ${against}`),
      );
  }
  if (g?.series && !series) {
    out.push(
      note(
        `series gate warming up: ${g.series.nights} of the ${g.series.nights_needed} nights it needs in this ` +
          'environment; until then the latest run is compared with its baseline using within-run statistics only, ' +
          'which cannot see night-to-night variation',
      ),
    );
  }
  if (series) out.push(...seriesFindings(series, g!.latest.run_id, thresholdPct));
  for (const n of g?.notes ?? []) out.push(note(n));
  for (const m of h.metrics)
    for (const c of m.changes)
      out.push(
        note(
          `change point: ${m.name} ${pct(c.ratio)} (${num(c.before)} -> ${num(c.after)} ${m.unit}${perRun(c.after, m.unit, (t) => `; ${t}`)}) ` +
            `at run ${c.run_id} (${c.started_at}, night ${c.index + 1} of ${m.points.length})`,
        ),
      );
  return out;
}

const p3 = (p: number) => (p < 0.001 ? p.toExponential(1) : p.toPrecision(2));
const against = (t: GateTest) =>
  `the reference of ${t.reference_nights} night(s) ` +
  `${t.reference_from === t.reference_to ? t.reference_from : `${t.reference_from} to ${t.reference_to}`}`;
const look = (t: GateTest) => (t.k === 1 ? 'tonight' : `the last ${t.k} nights`);

/** The series gate in words: failing metrics, unconfirmed alarms, held nights, level changes. */
function seriesFindings(s: SeriesGate, latest: string, thresholdPct: number | null): Finding[] {
  const out: Finding[] = [];
  const say = (text: string) => out.push(note(text));
  const regression = (text: string) => out.push({ kind: 'regression', text });
  const beyond = thresholdPct !== null ? ` (beyond ${thresholdPct}%)` : '';
  const confirmation = (c: Confirmation | null) => {
    if (!c) return s.confirm ? 'not re-measured yet' : 'not re-measured (--no-confirm, or no --fail-on-regression)';
    if (c.value === null) return `the confirmation could not measure (${c.error ?? 'no value'}), so the alarm stands`;
    const cfg = c.config_ratio
      ? `; tonight's config against ${c.reference_run}'s, side by side: ` +
        `${pct(c.config_ratio.estimate)} [${pct(c.config_ratio.low)}, ${pct(c.config_ratio.high)}]`
      : '';
    return `re-measured over ${c.trials} trials${c.run_dir ? ` (${c.run_dir})` : ''}${cfg}`;
  };
  for (const m of s.metrics) {
    const a = m.alarm;
    const t = m.test;
    if (m.failing && t) {
      const stage =
        m.status === 'persisted'
          ? `; it has persisted for ${NIGHTLY_DEFAULTS.persist} nights, so it becomes the reference ` +
            'after tonight (accept it with tunebench baseline accept to say it is intended)'
          : '';
      const confirmed = m.confirmation?.value ? `confirmed: ${pct(t.ratio)} after the re-measurement; ` : '';
      regression(
        `REGRESSION: ${m.name} is ${pct(a?.ratio ?? t.ratio)} vs ${against(t)} (${look(a ?? t)}, ` +
          `p = ${p3((a ?? t).p)} <= ${p3(s.per_test_alpha ?? s.alpha)})${beyond}; ` +
          `${confirmed}${confirmation(m.confirmation)}${stage}`,
      );
    } else if (m.failing && a) {
      regression(
        `REGRESSION: ${m.name} is ${pct(a.ratio)} vs ${against(a)} (${look(a)}, p = ${p3(a.p)})${beyond}; ` +
          `${confirmation(m.confirmation)}`,
      );
    } else if (m.alarm_direction === 'regression' && m.confirmation?.value) {
      say(
        `alarm not confirmed: ${m.name} measured ${pct(a!.ratio)} vs ${against(a!)} (p = ${p3(a!.p)}), ` +
          `${confirmation(m.confirmation)}: ${t ? `${pct(t.ratio)}, ` : ''}within the night-to-night spread; ` +
          'the night enters the series with the re-measured value',
      );
    } else if (m.pending && a) {
      say(`alarm: ${m.name} is ${pct(a.ratio)} vs ${against(a)} (p = ${p3(a.p)}): waiting for its confirmation`);
    } else if (m.direction === 'improvement' && t && m.status !== 'acknowledged') {
      say(
        `improvement: ${m.name} is ${pct(t.ratio)} vs ${against(t)} (${look(t)}, p = ${p3(t.p)}); ` +
          'held out of the reference until it persists or is accepted',
      );
    }
    const earlier = m.held.filter((r) => r !== latest);
    if (earlier.length > 0)
      say(
        'held out of the reference: ' +
          `${m.name} on ${earlier.length} earlier flagged night(s) (${earlier.join(', ')}); ` +
          `they join it when the change persists ${NIGHTLY_DEFAULTS.persist} nights or is accepted`,
      );
    for (const c of m.changes)
      say(
        `level change: ${m.name} ${pct(c.ratio)} (${c.direction}) from run ${c.run_id}, ` +
          (c.how === 'acknowledged'
            ? 'accepted by tunebench baseline accept or the pinned baseline'
            : `persisted ${NIGHTLY_DEFAULTS.persist} nights without being accepted`),
      );
  }
  if (!s.metrics.some((m) => m.failing || m.pending || m.alarm_direction === 'regression')) {
    const t = s.metrics.find((m) => m.test)?.test;
    say(
      `latest run ${latest}: no regression${beyond ? ` beyond ${thresholdPct}%` : ''} against ` +
        `${t ? against(t) : 'the reference nights'} (series gate: ${s.metrics.length} metric(s), ` +
        `alarm budget ${s.alpha} a night, night-to-night spread ${t ? `${(100 * t.spread).toFixed(1)}%` : '-'})`,
    );
  }
  return out;
}

function latestRows(h: ExperimentHistory): string[][] {
  return h.metrics.map((m) => {
    const p = m.points.at(-1)!;
    const ci = p.low !== null && p.high !== null ? ` [${num(p.low)}, ${num(p.high)}]` : '';
    return [
      m.name,
      `${num(p.value)}${ci} ${m.unit}${perRun(p.value, m.unit, (t) => ` (${t})`)}`,
      String(m.points.length),
      m.changes.map((c) => `${pct(c.ratio)} at ${c.run_id}`).join('; ') || 'none',
      m.env_key,
    ];
  });
}
const LATEST_HEADERS = ['metric', 'latest [95% CI]', 'runs', 'change points', 'environment'];

function chosenRows(h: ExperimentHistory): string[][] {
  return h.chosen.flatMap((c) =>
    c.changes.map((x) => [c.param, String(x.before), String(x.after), x.run_id, c.env_key]),
  );
}
const CHOSEN_HEADERS = ['parameter', 'before', 'after', 'from run', 'environment'];

/** "2026-12-08 01:16 UTC": a night's time on a 24-hour clock. */
export const nightTime = (iso: string): string =>
  /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso;

function nightRows(h: ExperimentHistory): string[][] {
  const x = (v: number) => `${v.toFixed(3)}x`;
  return h.nights.map((n) => [
    nightTime(n.started_at),
    n.run_id,
    n.commit?.slice(0, 12) ?? '-',
    n.verdict,
    n.ratio ? `${x(n.ratio.estimate)} [${x(n.ratio.low)}, ${x(n.ratio.high)}]` : '-',
    n.rounds > 0 ? String(n.rounds) : '-',
    n.reference?.commit?.slice(0, 12) ?? '-',
  ]);
}
const NIGHT_HEADERS = [
  'night',
  'run',
  'commit',
  'gate',
  'tonight/reference [95% CI]',
  'paired rounds',
  'reference commit',
];
const NIGHTS_NOTE =
  "Each night the paired gate (tunebench gate) ran tonight's commit and the reference's in interleaved rounds: " +
  'flagged nights (a slowdown beyond the threshold) and undecided ones never become the reference; accepted ones do.';

export function historyMarkdown(h: ExperimentHistory, thresholdPct: number | null): string {
  const out = [`# tunebench history: ${md(h.experiment)}`, ''];
  out.push(
    `${h.runs} finished runs in ${h.environments.length} environment(s): ` +
      `${h.environments.map((e) => `${code(e.env_key)} ${md(e.env_label)} (${e.runs} runs)`).join('; ')}.`,
    '',
  );
  out.push(...findings(h, thresholdPct).map((f) => `- ${alarming(f) ? `**${md(f.text)}**` : md(f.text)}`), '');
  out.push(
    '## Key metrics',
    '',
    table(
      LATEST_HEADERS,
      latestRows(h).map((r) => r.map(md)),
    ),
    '',
  );
  const chosen = chosenRows(h);
  out.push(
    '## Chosen config changes',
    '',
    chosen.length > 0
      ? table(
          CHOSEN_HEADERS,
          chosen.map((r) => r.map(md)),
        )
      : 'The chosen config never changed.',
    '',
  );
  if (h.nights.length > 0)
    out.push(
      '## Nights judged by the paired gate',
      '',
      NIGHTS_NOTE,
      '',
      table(
        NIGHT_HEADERS,
        nightRows(h).map((r) => r.map(md)),
      ),
      '',
    );
  return out.join('\n');
}

export function historyHtml(
  h: ExperimentHistory,
  chart: { chart: Chart; svg: string },
  thresholdPct: number | null,
): string {
  const title = `tunebench history: ${h.experiment}`;
  const out = ['<!doctype html>', '<html lang="en">', '<head>', '<meta charset="utf-8">'];
  out.push(
    `<meta http-equiv="Content-Security-Policy" content="${esc(REPORT_CSP)}">`,
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
  );
  out.push(`<h1>${esc(title)}</h1>`);
  out.push(
    `<p>${h.runs} finished runs in ${h.environments.length} environment(s): ` +
      h.environments.map((e) => `<code>${esc(e.env_key)}</code> ${esc(e.env_label)} (${e.runs} runs)`).join('; ') +
      '.</p>',
  );
  out.push(
    '<h2 id="findings">Findings</h2>',
    '<ul>',
    ...findings(h, thresholdPct).map((f) => `<li${alarming(f) ? ' class="warn"' : ''}>${esc(f.text)}</li>`),
    '</ul>',
  );
  out.push(
    '<h2 id="trend">Trend</h2>',
    `<figure class="chart" data-chart="${esc(chart.chart.name)}">`,
    chart.svg,
    `<figcaption>${esc(chart.chart.title)} ` +
      `(<a href="charts/${esc(chart.chart.name)}.vl.json">Vega-Lite spec</a>)</figcaption>`,
    '</figure>',
  );
  out.push('<h2 id="metrics">Key metrics</h2>', htmlTable(LATEST_HEADERS, latestRows(h), []));
  const chosen = chosenRows(h);
  out.push(
    '<h2 id="chosen">Chosen config changes</h2>',
    chosen.length > 0 ? htmlTable(CHOSEN_HEADERS, chosen, []) : '<p>The chosen config never changed.</p>',
  );
  if (h.nights.length > 0)
    out.push(
      '<h2 id="nights">Nights judged by the paired gate</h2>',
      `<p>${esc(NIGHTS_NOTE)}</p>`,
      htmlTable(
        NIGHT_HEADERS,
        nightRows(h),
        h.nights.flatMap((n, i) => (n.verdict === 'flagged' ? [i] : [])),
      ),
    );
  out.push('</body>', '</html>', '');
  return out.join('\n');
}
