// Small Markdown building blocks shared by the Markdown reports: escaped cells and tables.

/** Escapes text for a Markdown table cell or paragraph (pipes, backticks, HTML, newlines). */
export function md(text: string): string {
  return text.replace(/[\\`*_|<>[\]]/g, (c) => `\\${c}`).replace(/\r?\n/g, ' ');
}

export function table(headers: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.map((c) => String(c)).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

/** An inline code span; backticks inside are replaced, since code spans cannot escape them. */
export function code(text: string): string {
  return `\`${text.replace(/`/g, "'").replace(/\r?\n/g, ' ')}\``;
}
