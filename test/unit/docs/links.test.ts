// The README and docs/ stay readable and connected (issue 17): every relative link of README.md and
// docs/**/*.md points at a file that exists, every #anchor at a heading of its target (GitHub's
// slugs), and the README stays short.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../../support/paths.js';

const README_MAX_LINES = 350;

interface Link {
  /** The file the link is written in, relative to the repository root. */
  from: string;
  line: number;
  target: string;
}

/** The lines of a Markdown text outside fenced code blocks, with code spans blanked; others are ''. */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split(/\r\n|\r|\n/).map((line) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) {
      fence = marker;
      return '';
    }
    if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
      return '';
    }
    return line.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, 'code');
  });
}

/** A link target without the angle brackets that may enclose it. */
const unbracket = (target: string | undefined) => (target ?? '').replace(/^<|>$/g, '');

/** Every link and image of a Markdown text: inline `[text](target "title")` and reference definitions. */
export function links(text: string, from: string): Link[] {
  const found: Link[] = [];
  proseLines(text).forEach((line, i) => {
    const inline = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
    for (const m of line.matchAll(inline)) found.push({ from, line: i + 1, target: unbracket(m[1]) });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
    if (definition) found.push({ from, line: i + 1, target: unbracket(definition[1]) });
  });
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // HTML tags
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** An ATX heading's text: without its #s and its code spans' backticks. */
const headingText = (line: string) =>
  line
    .replace(/^\s{0,3}#{1,6}\s*/, '')
    .replace(/\s+#+\s*$/, '')
    .replace(/`/g, '');

/** The anchors a Markdown text defines: its headings' slugs (repeats get -1, -2, ...) and explicit ids. */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  const add = (base: string) => {
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  };
  // Headings are read with their code spans, which GitHub keeps as text.
  const raw = text.split(/\r\n|\r|\n/);
  const prose = proseLines(text);
  prose.forEach((line, i) => {
    const atx = /^\s{0,3}#{1,6}(\s|$)/.test(line);
    if (atx) add(slug(headingText(raw[i] ?? '')));
    const next = prose[i + 1];
    const setext = next !== undefined && /^\s{0,3}(=+|-+)\s*$/.test(next) && line.trim() !== '' && !atx;
    if (setext && !line.trim().startsWith('|')) add(slug((raw[i] ?? '').replace(/`/g, '')));
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1] ?? '');
  });
  return out;
}

/** How the checker sees files: whether a path exists, and a Markdown file's text (null: unreadable). */
interface Files {
  exists(path: string): boolean;
  read(path: string): string | null;
}

const DISK: Files = {
  exists: existsSync,
  read: (path) => {
    try {
      return statSync(path).isFile() ? readFileSync(path, 'utf8') : null;
    } catch {
      return null;
    }
  },
};

/** Why a link is broken, or null when it resolves. External links and other schemes are not checked. */
export function problem(link: Link, files: Files = DISK): string | null {
  const { target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, https:, mailto:, ...
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target);
  const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : null;
  const file = pathPart === '' ? join(ROOT, link.from) : resolve(ROOT, dirname(link.from), pathPart);
  const inside = relative(ROOT, file);
  if (inside.startsWith(`..${sep}`) || inside === '..') return `${target}: points outside the repository`;
  if (!files.exists(file)) return `${target}: ${inside} does not exist`;
  if (anchor === null || anchor === '') return null;
  if (!file.endsWith('.md')) return `${target}: #${anchor} in a file that is not Markdown`;
  const text = files.read(file);
  if (text === null) return `${target}: ${inside} cannot be read`;
  return anchors(text).has(anchor) ? null : `${target}: ${inside} has no heading for #${anchor}`;
}

function markdownFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) found.push(path);
  }
  return found.sort();
}

function brokenLinks(files: readonly string[]): string[] {
  return files.flatMap((file) => {
    const from = relative(ROOT, file);
    return links(readFileSync(file, 'utf8'), from)
      .map((link) => [link, problem(link)] as const)
      .filter(([, why]) => why !== null)
      .map(([link, why]) => `${link.from}:${link.line}: ${why}`);
  });
}

describe('the README and docs/', () => {
  const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

  it('has docs to check', () => {
    assert.ok(files.length > 1, 'docs/ holds Markdown files');
  });

  it('links only to files and headings that exist', () => {
    const count = files.reduce((n, f) => n + links(readFileSync(f, 'utf8'), relative(ROOT, f)).length, 0);
    assert.ok(count > 20, `found ${count} links: the extractor works`);
    assert.deepEqual(brokenLinks(files), []);
  });

  it(`keeps the README at most ${README_MAX_LINES} lines`, () => {
    const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines; move reference material to docs/`);
  });
});

describe('the link checker', () => {
  const sample = [
    '# Title',
    'See [the guide](docs/architecture.md), [a section](docs/architecture.md#layers) and [here](#a-b-c).',
    '![a picture](docs/default-report.png) [web](https://example.com) [mail](mailto:a@b.c)',
    '## A `b` c',
    '## A `b` c',
    'Broken: [gone](docs/no-such-page.md), [bad anchor](docs/architecture.md#no-such-heading), [self](#nowhere).',
    '```md',
    '[inside code](does-not-matter.md)',
    '```',
    'Inline `[code](not-a-link.md)` is not a link. [ref]: docs/missing-too.md',
    '[def]: <docs/decisions.md>',
  ].join('\n');

  it('finds links and images, not code, and skips other schemes', () => {
    const targets = links(sample, 'README.md').map((l) => l.target);
    assert.ok(targets.includes('docs/default-report.png'));
    assert.ok(targets.includes('docs/decisions.md'), 'a reference definition');
    assert.ok(!targets.some((t) => t.includes('does-not-matter') || t.includes('not-a-link')), 'code is not prose');
  });

  it('reports a missing file, a missing anchor and a missing local anchor', () => {
    // The sample stands in for a file sample.md at the root; every other path is read from disk.
    const self = join(ROOT, 'sample.md');
    const files: Files = {
      exists: (path) => path === self || DISK.exists(path),
      read: (path) => (path === self ? sample : DISK.read(path)),
    };
    const broken = links(sample, 'sample.md')
      .map((l) => problem(l, files))
      .filter((p) => p !== null);
    assert.equal(broken.length, 3, broken.join('\n'));
    const [file, anchor, local] = broken;
    assert.match(file ?? '', /no-such-page\.md does not exist/);
    assert.match(anchor ?? '', /no heading for #no-such-heading/);
    assert.match(local ?? '', /no heading for #nowhere/);
  });

  it("makes GitHub's slugs", () => {
    assert.equal(slug('Nightly jobs: resume, history and regressions'), 'nightly-jobs-resume-history-and-regressions');
    assert.equal(slug("The seeds' claims"), 'the-seeds-claims');
    assert.equal(slug('trials.jsonl: the journal'), 'trialsjsonl-the-journal');
    assert.equal(slug('Fault injection: kill -9 and resume'), 'fault-injection-kill--9-and-resume');
    assert.equal(slug('num_workers x prefetch_factor'), 'num_workers-x-prefetch_factor');
    assert.deepEqual([...anchors(sample)], ['title', 'a-b-c', 'a-b-c-1']);
  });
});
