// The blocks a report section is made of (paragraphs, lists, warnings, tables of text cells).
export interface Table {
  headers: string[];
  rows: string[][];
  /** Rows to emphasise (the chosen config or arm), by index. */
  highlight: number[];
}

export type Block =
  | { kind: 'text'; text: string }
  | { kind: 'list'; items: string[] }
  | { kind: 'warning'; text: string }
  | { kind: 'table'; table: Table };

export const text = (t: string): Block => ({ kind: 'text', text: t });
export const tableBlock = (headers: string[], rows: (string | number)[][], highlight: number[] = []): Block => ({
  kind: 'table',
  table: { headers, rows: rows.map((r) => r.map(String)), highlight },
});
