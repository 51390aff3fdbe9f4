// RESULTS.md holds one section per benchmark; each run replaces only its own section.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths.js';

const FILE = join(ROOT, 'test', 'bench', 'RESULTS.md');
const HEADER =
  '# Benchmark results\n\nEach section is rewritten by its benchmark; `npm run bench` runs them all. ' +
  'Figures in a section come from one run; compare ratios, not absolute times (this machine is noisy).\n';

export function writeSection(name: string, markdown: string): void {
  const begin = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${begin}\n${markdown.trim()}\n${end}`;
  let text = existsSync(FILE) ? readFileSync(FILE, 'utf8') : HEADER;
  if (!text.startsWith('# Benchmark results')) text = HEADER;
  const at = text.indexOf(begin);
  const stop = text.indexOf(end);
  text =
    at >= 0 && stop > at
      ? `${text.slice(0, at)}${block}${text.slice(stop + end.length)}`
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(FILE, text);
}
