// Markdown escaping (issue 15, item 15): text from a workload or an experiment file shows literally
// in summary.md and the GitHub step summary; it makes no heading, no table cell and no raw HTML.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { code, md, table } from '../../../harness/report/markdown.js';
import { summaryMarkdown } from '../../../harness/report/summary-md.js';
import { REPORT_FIXTURE, resultOf } from '../../support/runs.js';
import { readRunDir, type RunResult } from '../../../harness/experiment/run-file.js';
import { STAGE_KIND_MODULES } from '../../../harness/engine/kinds/index.js';

/** Lines as a Markdown parser sees them: CR, LF and CRLF all end a line. */
const lines = (text: string) => text.split(/\r\n|\r|\n/);

/** Cells of a GFM table row: split on pipes not escaped by an odd number of backslashes. */
function cells(row: string): number {
  let n = 0;
  let backslashes = 0;
  for (const c of row) {
    if (c === '|' && backslashes % 2 === 0) n += 1;
    backslashes = c === '\\' ? backslashes + 1 : 0;
  }
  return n - 1;
}

/** Raw HTML a Markdown renderer would pass through: a `<` that no backslash escapes, outside code spans. */
const rawHtml = (text: string) => /(^|[^\\])<[a-z/!?]/i.test(text.replace(/(?<!\\)`[^`]*`/g, ''));

describe('md, code and table', () => {
  it('md keeps text on one line and escapes what would start a block', () => {
    for (const ending of ['\r', '\n', '\r\n'])
      assert.equal(lines(md(`ok${ending}# pwned`)).length, 1, JSON.stringify(ending));
    assert.equal(md('# pwned'), '\\# pwned');
    assert.equal(md('## pwned'), '\\## pwned');
    assert.equal(md('- item'), '\\- item');
    assert.equal(md('1. item'), '1\\. item');
    assert.equal(md('-33.3%'), '-33.3%', 'a negative number is left as it is');
    assert.equal(md('-'), '-', 'the placeholder of a missing value is left as it is');
  });

  it('md escapes pipes, backticks and HTML', () => {
    assert.equal(md('a|b'), 'a\\|b');
    assert.equal(md('`x`'), '\\`x\\`');
    assert.ok(!rawHtml(md('<script>alert(1)</script> <img src=x onerror=alert(2)>')));
  });

  it('md and code show terminal escape sequences as text, for whoever prints the file', () => {
    assert.equal(md('a\x1b]0;t\x07b'), 'a\\\\x1b\\]0;t\\\\x07b');
    assert.equal(code('a\x1b[2J'), '`a\\x1b[2J`');
  });

  it('code keeps a code span on one line, whatever line ending the text holds', () => {
    assert.equal(lines(code('a\rb\nc\r\nd')).length, 1);
    assert.equal(code('a`b'), "`a'b`");
  });

  it('table keeps every row to its columns when a cell holds a pipe or a line ending', () => {
    const out = table(
      ['parameter', 'value'],
      [
        [code('tag'), code('a|b')],
        ['x\ry', 'p\nq|r'],
        [md('a|b\r# h'), 'fine'],
      ],
    );
    const rows = lines(out);
    assert.equal(rows.length, 5);
    for (const row of rows) assert.equal(cells(row), 2, row);
  });
});

describe('summary.md with hostile text', () => {
  it('makes no heading, no broken table and no raw HTML from a workload message or a parameter value', () => {
    const { run, records } = readRunDir(REPORT_FIXTURE);
    const result = structuredClone<RunResult>(run.result!);
    const evil = 'x\r# injected heading | <img src=x onerror=alert(1)> `tick`';
    result.experiment = `exp\r# fake title`;
    result.chosen['intra_op_threads'] = 'a|b\r<b>bold</b>';
    result.evidence['intra_op_threads']!.rule = evil;
    result.warnings.push({ kind: 'note', source: 'journal', text: evil });
    const sweep = result.stages.find((s) => s.kind === 'sweep')!;
    sweep.notes.push({ kind: 'text', text: evil }, { kind: 'text', text: '# a note that is a heading' });
    const configs = resultOf(sweep, 'sweep').configs;
    configs[0]!.key = 'intra_op_threads=a|b\r# k';
    configs[1]!.why = `crash: ${evil}`;
    const out = summaryMarkdown(result, records, STAGE_KIND_MODULES);
    const all = lines(out);
    const headings = all.filter((l) => /^\s{0,3}#/.test(l) || /^\s*[-*+]\s+#/.test(l));
    assert.ok(
      headings.every((h) => /^#{1,2} (tunebench|Stage|Chosen config|Warnings)/.test(h)),
      headings.join('\n'),
    );
    assert.ok(!rawHtml(out), 'raw HTML in summary.md');
    // Each table row has as many cells as its header.
    let columns = 0;
    for (const l of all) {
      if (!l.startsWith('|')) {
        columns = 0;
        continue;
      }
      if (columns === 0) columns = cells(l);
      else assert.equal(cells(l), columns, l);
    }
  });
});
