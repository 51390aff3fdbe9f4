// Small Markdown building blocks shared by the Markdown reports: escaped text, code spans and tables.
// Text from a workload or an experiment file must show literally (GitHub renders summary.md and the
// step summary): no line break, heading, list, table cell or raw HTML of its own.

/** CR, LF and CRLF all end a line in CommonMark; a lone CR is as good as LF for a heading. */
const LINE_ENDING = /\r\n|\r|\n/g;
/** Other control characters (escape sequences for whoever `cat`s the file), shown as `\x1b`. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;
const hex = (c: string) => `x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/**
 * Escapes text for a Markdown paragraph, list item or table cell: backslashes, pipes, backticks,
 * emphasis, links and HTML are escaped, line endings become spaces, other control characters show
 * as `\x1b`, and a leading `#`, list marker or ordered-list number is escaped so that the text
 * starts no block.
 */
export function md(text: string): string {
  return text
    .replace(/[\\`*_|<>[\]~]/g, (c) => `\\${c}`)
    .replace(LINE_ENDING, ' ')
    .replace(CONTROL, (c) => `\\\\${hex(c)}`)
    .replace(/^(\s*)(#|[-+](?=\s|-)|\d{1,9}(?=[.)](?:\s|$)))/, (_m, space: string, lead: string) =>
      lead === '#' || lead === '-' || lead === '+' ? `${space}\\${lead}` : `${space}${lead}\\`,
    );
}

/**
 * A GFM table. Cells are Markdown (use md() or code() for text); whatever they hold, a cell stays
 * one cell on one line: line endings become spaces and every pipe not already escaped is escaped
 * (GFM splits cells before it parses code spans, and `\|` shows as `|` inside one).
 */
export function table(headers: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.map((c) => cell(String(c))).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

function cell(text: string): string {
  let out = '';
  let backslashes = 0;
  for (const c of text.replace(LINE_ENDING, ' ')) {
    // A pipe after an odd number of backslashes is escaped already.
    out += c === '|' && backslashes % 2 === 0 ? '\\|' : c;
    backslashes = c === '\\' ? backslashes + 1 : 0;
  }
  return out;
}

/** An inline code span; backticks inside are replaced, since code spans cannot escape them. */
export function code(text: string): string {
  return `\`${text
    .replace(/`/g, "'")
    .replace(LINE_ENDING, ' ')
    .replace(CONTROL, (c) => `\\${hex(c)}`)}\``;
}
