// `tunebench time` as a terminal table and as Markdown (--export-markdown).
import type { TimedCommand, TimeSummary } from '../analysis/time-summary.js';
import { fmtRatio } from '../analysis/undecided.js';
import { figure, MISSING } from './format.js';
import { code, md, table } from './markdown.js';

/** Seconds in the unit that suits them: 812 us, 52.3 ms, 1.43 s, 2 min 5 s. */
export function fmtDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return MISSING;
  if (seconds < 1e-3) return `${(seconds * 1e6).toPrecision(3)} us`;
  if (seconds < 1) return `${(seconds * 1e3).toPrecision(3)} ms`;
  if (seconds < 120) return `${seconds.toPrecision(3)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

const rate = (v: number) => (v >= 100 ? v.toFixed(0) : v.toPrecision(3));
// Enough digits that a ratio never rounds onto 1 (0.9955 is "0.996x", not "1.00x").
const times = (v: number) => fmtRatio(v);

/** One row of cells; `withRate` adds the samples/s column (programs that send step events). */
function cells(c: TimedCommand, withRate: boolean, mode: TimeSummary['mode']): string[] {
  const w = c.wall;
  const median = w
    ? w.ci
      ? `${fmtDuration(w.median)} [${fmtDuration(w.ci.low)}, ${fmtDuration(w.ci.high)}]`
      : `${fmtDuration(w.median)} (no CI below 6 runs)`
    : MISSING;
  const range = w ? `${fmtDuration(w.min)} … ${fmtDuration(w.max)}` : MISSING;
  const failed = Object.entries(c.failures)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  const runs = `${c.runs}${failed ? ` (+${failed})` : ''}`;
  const s = c.samples_per_second;
  const rateCell = s ? (s.ci ? `${rate(s.median)} [${rate(s.ci.low)}, ${rate(s.ci.high)}]` : rate(s.median)) : MISSING;
  const verdict =
    mode === 'compare' && c.speedup
      ? `${c.verdict}: ${times(c.speedup.estimate)} [${figure(c.speedup.low, times)}, ${figure(c.speedup.high, times)}]`
      : c.verdict;
  return [c.label, runs, median, range, ...(withRate ? [rateCell] : []), verdict];
}

function headers(s: TimeSummary, withRate: boolean): string[] {
  const verdict = s.mode === 'compare' ? 'vs the first: speed-up [95% CI]' : s.mode === 'scan' ? 'verdict' : 'status';
  return [
    s.mode === 'scan' ? 'values' : 'command',
    'runs',
    'median time [95% CI]',
    'min … max',
    ...(withRate ? ['samples/s median [95% CI]'] : []),
    verdict,
  ];
}

/** Aligned columns for the terminal, then the findings. */
export function timeText(s: TimeSummary): string {
  const withRate = s.commands.some((c) => c.samples_per_second !== null);
  const rows = [headers(s, withRate), ...s.commands.map((c) => cells(c, withRate, s.mode))];
  const widths = rows[0]!.map((_, j) => Math.max(...rows.map((r) => r[j]!.length)));
  const lines = rows.map((r) =>
    r
      .map((cell, j) => (j === r.length - 1 ? cell : cell.padEnd(widths[j]!)))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return [...lines, '', ...s.findings.map((f) => `- ${f}`)].join('\n');
}

/** The same as a Markdown section (for --export-markdown and CI step summaries). */
export function timeMarkdown(s: TimeSummary, commandLine: string): string {
  const withRate = s.commands.some((c) => c.samples_per_second !== null);
  const rows = s.commands.map((c) => {
    const [label, ...rest] = cells(c, withRate, s.mode);
    return [code(label!), ...rest.map(md)];
  });
  return [
    `## ${md(commandLine)}`,
    '',
    table(headers(s, withRate), rows),
    '',
    ...s.findings.map((f) => `- ${md(f)}`),
    '',
    `Run directory: ${code(s.run_dir)} (\`tunebench report\` renders it again).`,
    '',
  ].join('\n');
}
