// Counting rendered marks in a vega SVG: items of the mark group whose class ends with `name`.
export function countMarks(svg: string, name: string): number {
  const open = new RegExp(`<g class="mark-[a-z]+ role-mark ${name}"[^>]*>`).exec(svg);
  if (!open) return 0;
  const rest = svg.slice(open.index + open[0].length);
  // A mark group holds only leaf items (path, text, line, rect) and ends at its first </g>.
  const body = rest.slice(0, rest.indexOf('</g>'));
  return (body.match(/<(path|text|line|rect)\b/g) ?? []).length;
}

/** Counts items of every mark group named `name`: a faceted chart draws one group per cell. */
export function countAllMarks(svg: string, name: string): number {
  let total = 0;
  const open = new RegExp(`<g class="mark-[a-z]+ role-mark ${name}"[^>]*>`, 'g');
  for (let m = open.exec(svg); m; m = open.exec(svg)) {
    if (m[0].endsWith('/>')) continue; // an empty group: <g .../>
    const rest = svg.slice(m.index + m[0].length);
    total += (rest.slice(0, rest.indexOf('</g>')).match(/<(path|text|line|rect)\b/g) ?? []).length;
  }
  return total;
}
