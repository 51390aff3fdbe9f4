// `tunebench time` as a terminal table and as Markdown (--export-markdown); the table's cells are shared
// with the other markup exports (time-export.ts).
import type { TimedCommand, TimeSummary } from '../analysis/time-summary.js';
import { fmtRatio } from '../analysis/undecided.js';
import { figure, MISSING } from './format.js';
import { code, md, table } from './markdown.js';

/** -u/--time-unit (hyperfine's): every duration in this unit; absent: the unit that suits each value. */
export type TimeUnit = 'millisecond' | 'second';
export const TIME_UNITS: readonly TimeUnit[] = ['millisecond', 'second'];
/** --sort (hyperfine's): auto and command keep the order given, mean-time sorts by mean time. */
export type SortOrder = 'auto' | 'command' | 'mean-time';
export const SORT_ORDERS: readonly SortOrder[] = ['auto', 'command', 'mean-time'];

/** How the table is drawn. */
export interface TableOptions {
  unit?: TimeUnit;
}

const inUnit = (v: number) => (v >= 100 ? v.toFixed(0) : v.toPrecision(3));

/** Seconds in the unit that suits them (812 us, 52.3 ms, 1.43 s, 2 min 5 s), or in the unit asked for. */
export function fmtDuration(seconds: number, unit?: TimeUnit): string {
  if (!Number.isFinite(seconds)) return MISSING;
  if (unit === 'millisecond') return `${inUnit(seconds * 1e3)} ms`;
  if (unit === 'second') return `${inUnit(seconds)} s`;
  if (seconds < 1e-3) return `${(seconds * 1e6).toPrecision(3)} us`;
  if (seconds < 1) return `${(seconds * 1e3).toPrecision(3)} ms`;
  if (seconds < 120) return `${seconds.toPrecision(3)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

const rate = (v: number) => (v >= 100 ? v.toFixed(0) : v.toPrecision(3));
// Enough digits that a ratio never rounds onto 1 (0.9955 is "0.996x", not "1.00x").
const times = (v: number) => fmtRatio(v);

/** One row of cells; `withRate` adds the samples/s column (programs that send step events). */
function cells(c: TimedCommand, withRate: boolean, mode: TimeSummary['mode'], unit?: TimeUnit): string[] {
  const w = c.wall;
  const d = (v: number) => fmtDuration(v, unit);
  const median = w
    ? w.ci
      ? `${d(w.median)} [${d(w.ci.low)}, ${d(w.ci.high)}]`
      : `${d(w.median)} (no CI below 6 runs)`
    : MISSING;
  const range = w ? `${d(w.min)} … ${d(w.max)}` : MISSING;
  // Mean CPU per run, as hyperfine shows it: what the wall time cannot tell (a run that waited, or one that
  // used several cores).
  const ticks = (v: number) => (v === 0 ? '0' : d(v));
  const cpu = c.user !== null && c.system !== null ? `${ticks(c.user)} / ${ticks(c.system)}` : MISSING;
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
  return [c.label, runs, median, range, cpu, ...(withRate ? [rateCell] : []), verdict];
}

function headers(s: TimeSummary, withRate: boolean): string[] {
  const verdict =
    s.mode === 'compare' ? 'vs the baseline: speed-up [95% CI]' : s.mode === 'scan' ? 'verdict' : 'status';
  return [
    s.mode === 'scan' ? 'values' : 'command',
    'runs',
    'median time [95% CI]',
    'min … max',
    'user / system (mean)',
    ...(withRate ? ['samples/s median [95% CI]'] : []),
    verdict,
  ];
}

/** The table drawn once: its headers and a row of plain-text cells per command (the label first). */
export function timeTable(s: TimeSummary, opts: TableOptions = {}): { headers: string[]; rows: string[][] } {
  const withRate = s.commands.some((c) => c.samples_per_second !== null);
  return { headers: headers(s, withRate), rows: s.commands.map((c) => cells(c, withRate, s.mode, opts.unit)) };
}

/** The rows in the order --sort asks for: as given (auto, command), or by mean time (failed ones last). */
export function sortedSummary(s: TimeSummary, order: SortOrder = 'auto'): TimeSummary {
  if (order !== 'mean-time') return s;
  const mean = (c: TimedCommand) => c.wall?.mean ?? Number.POSITIVE_INFINITY;
  return { ...s, commands: [...s.commands].sort((a, b) => mean(a) - mean(b)) };
}

/** Aligned columns for the terminal, then the findings. */
export function timeText(s: TimeSummary, opts: TableOptions = {}): string {
  const t = timeTable(s, opts);
  const rows = [t.headers, ...t.rows];
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
export function timeMarkdown(s: TimeSummary, commandLine: string, opts: TableOptions = {}): string {
  const t = timeTable(s, opts);
  const rows = t.rows.map(([label, ...rest]) => [code(label!), ...rest.map(md)]);
  return [
    `## ${md(commandLine)}`,
    '',
    table(t.headers, rows),
    '',
    ...s.findings.map((f) => `- ${md(f)}`),
    '',
    `Run directory: ${code(s.run_dir)} (\`tunebench report\` renders it again).`,
    '',
  ].join('\n');
}
