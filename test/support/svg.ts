// Counting rendered marks in a vega SVG: items of the mark group whose class ends with `name`.
export function countMarks(svg: string, name: string): number {
  const open = new RegExp(`<g class="mark-[a-z]+ role-mark ${name}"[^>]*>`).exec(svg);
  if (!open) return 0;
  const rest = svg.slice(open.index + open[0].length);
  // A mark group holds only leaf items (path, text, line, rect) and ends at its first </g>.
  const body = rest.slice(0, rest.indexOf('</g>'));
  return (body.match(/<(path|text|line|rect)\b/g) ?? []).length;
}
