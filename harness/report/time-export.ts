// The --export-* files of `tunebench time` in hyperfine's layouts: JSON (results[] with command, mean,
// stddev, median, user, system, min, max, times, exit_codes and parameters, in seconds) and CSV as
// hyperfine 1.15 writes them, tunebench's own figures under "tunebench" keys; AsciiDoc and Org tables
// of the same cells as the terminal and Markdown table (time.ts).
import type { TimedCommand, TimeSummary } from '../analysis/time-summary.js';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { fillValues, type TimeRequest } from '../experiment/one-liner.js';
import { writeFileAtomic } from '../store/atomic.js';
import { timeMarkdown, timeTable, type TimeUnit } from './time.js';

/** Version of the "tunebench" part of the JSON export. */
export const TIME_EXPORT_VERSION = 1;

export interface ExportContext {
  /** The command line that made the run. */
  commandLine: string;
  /** The command as hyperfine names it: the -n name, else the command line with scanned values filled in. */
  command: (c: TimedCommand) => string;
  /** -u: the unit of the markup tables (CSV and JSON are always in seconds, as hyperfine's). */
  unit?: TimeUnit;
}

/** A scanned row's parameter values as hyperfine writes them (text); undefined outside a scan. */
function parameters(s: TimeSummary, c: TimedCommand): Record<string, string> | undefined {
  if (s.mode !== 'scan') return undefined;
  return Object.fromEntries(Object.entries(c.config).map(([k, v]) => [k, String(v)]));
}

/** One entry of results[]: hyperfine's fields first, then tunebench's under "tunebench". */
function result(s: TimeSummary, c: TimedCommand, ctx: ExportContext): Record<string, unknown> {
  const w = c.wall;
  // hyperfine's times and exit_codes are the timed runs, pairwise; a run that never timed (a failure
  // without -i) is in tunebench.runs_in_order only.
  const timed = c.times.filter((t) => t.seconds !== null);
  const params = parameters(s, c);
  return {
    command: ctx.command(c),
    mean: w?.mean ?? null,
    stddev: w?.stddev ?? null,
    median: w?.median ?? null,
    user: c.user,
    system: c.system,
    min: w?.min ?? null,
    max: w?.max ?? null,
    times: timed.map((t) => t.seconds),
    exit_codes: timed.map((t) => t.exit_code),
    ...(params ? { parameters: params } : {}),
    tunebench: {
      label: c.label,
      runs: c.runs,
      failures: c.failures,
      failed_every_run: c.failed_every_run,
      timing: c.timing,
      median_ci: w?.ci ?? null,
      samples_per_second: c.samples_per_second,
      verdict: c.verdict,
      speedup: c.speedup,
      why: c.why,
      runs_in_order: c.times,
    },
  };
}

/** --export-json: hyperfine's layout, so scripts written for hyperfine's JSON read it. */
export function timeJson(s: TimeSummary, ctx: ExportContext): string {
  const doc = {
    results: s.commands.map((c) => result(s, c, ctx)),
    tunebench: {
      version: TIME_EXPORT_VERSION,
      mode: s.mode,
      command_line: ctx.commandLine,
      run_dir: s.run_dir,
      findings: s.findings,
    },
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** A CSV field, quoted where it must be (RFC 4180). */
function csvField(v: string | number | null): string {
  const text = v === null ? '' : String(v);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** --export-csv: hyperfine's header (command,mean,stddev,median,user,system,min,max,parameter_<name>...). */
export function timeCsv(s: TimeSummary, ctx: ExportContext): string {
  const names = s.mode === 'scan' ? Object.keys(s.commands[0]?.config ?? {}) : [];
  const header = [
    'command',
    'mean',
    'stddev',
    'median',
    'user',
    'system',
    'min',
    'max',
    ...names.map((n) => `parameter_${n}`),
  ];
  const rows = s.commands.map((c) => {
    const w = c.wall;
    const params = parameters(s, c) ?? {};
    return [
      ctx.command(c),
      w?.mean ?? null,
      w?.stddev ?? null,
      w?.median ?? null,
      c.user,
      c.system,
      w?.min ?? null,
      w?.max ?? null,
      ...names.map((n) => params[n] ?? null),
    ];
  });
  return [header, ...rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

/** --export-asciidoc: the table as AsciiDoc (hyperfine's shape: one cell per line), then the findings. */
export function timeAsciidoc(s: TimeSummary, ctx: ExportContext): string {
  const t = timeTable(s, ctx.unit === undefined ? {} : { unit: ctx.unit });
  const cell = (v: string) => `| ${v.replace(/\|/g, '\\|')} `;
  const cols = t.headers.map((_, j) => (j === 0 || j === t.headers.length - 1 ? '<' : '>')).join(',');
  const body = t.rows.flatMap(([label, ...rest]) => ['', cell(`\`${label!}\``), ...rest.map(cell)]);
  return [
    `[cols="${cols}"]`,
    '|===',
    ...t.headers.map(cell),
    ...body,
    '|===',
    '',
    ...s.findings.map((f) => `* ${f}`),
    '',
  ].join('\n');
}

/** --export-orgmode: the table as an Emacs Org table (hyperfine's shape), then the findings. */
export function timeOrgmode(s: TimeSummary, ctx: ExportContext): string {
  const t = timeTable(s, ctx.unit === undefined ? {} : { unit: ctx.unit });
  const line = (cells: string[]) => `| ${cells.map((v) => v.replace(/\|/g, '\\vert{}')).join(' | ')} |`;
  return [
    line(t.headers),
    `|${t.headers.map(() => '--').join('+')}|`,
    ...t.rows.map(([label, ...rest]) => line([`=${label!}=`, ...rest])),
    '',
    ...s.findings.map((f) => `- ${f}`),
    '',
  ].join('\n');
}

/** Where `tunebench time` writes hyperfine's exports (--export-json and the others), where given. */
export interface TimeExports {
  json?: string | undefined;
  csv?: string | undefined;
  markdown?: string | undefined;
  asciidoc?: string | undefined;
  orgmode?: string | undefined;
}

/** The name of a row in hyperfine's exports: its label, or a scan's command with the values filled in. */
export function exportName(req: TimeRequest): ExportContext['command'] {
  return (c: TimedCommand) =>
    req.scans.length > 0 && req.names === undefined ? fillValues(req.commands[0]!, c.config) : c.label;
}

/** time.json and time.md in the run directory, and the --export-* files (JSON in the order given). */
export function writeTimeFiles(opts: {
  summary: TimeSummary;
  shown: TimeSummary;
  line: string;
  unit: TimeUnit | undefined;
  /** The files of --export-json and the others, where given. */
  exports: TimeExports;
  command: ExportContext['command'];
}): void {
  const { summary, shown, line, exports: to, command } = opts;
  const unitOf = opts.unit ? { unit: opts.unit } : {};
  const json = `${JSON.stringify({ tunebench_time: 1, command_line: line, ...summary }, null, 2)}\n`;
  const markdown = timeMarkdown(shown, line, unitOf);
  writeFileAtomic(join(summary.run_dir, 'time.json'), json);
  writeFileAtomic(join(summary.run_dir, 'time.md'), markdown);
  const ctx: ExportContext = { commandLine: line, command, ...unitOf };
  const exports: [string, string | undefined, () => string][] = [
    ['--export-json', to.json, () => timeJson(summary, ctx)],
    ['--export-csv', to.csv, () => timeCsv(shown, ctx)],
    ['--export-markdown', to.markdown, () => markdown],
    ['--export-asciidoc', to.asciidoc, () => timeAsciidoc(shown, ctx)],
    ['--export-orgmode', to.orgmode, () => timeOrgmode(shown, ctx)],
  ];
  for (const [flag, file, text] of exports) {
    if (file === undefined) continue;
    try {
      writeFileAtomic(resolve(file), text());
    } catch (error) {
      throw new ConfigError(
        `${flag} ${file}: cannot write it ` +
          `(${(error as Error).message}); the run itself is kept in ${summary.run_dir}`,
        [],
        { cause: error },
      );
    }
  }
}
