// Attacks on the reports (issue 31, item 8 and the weak items on reports): names with line breaks,
// escape sequences and backslashes that once crashed the chart compiler and left the run `running`,
// a workload that makes the reports unwritable, a run.json edited to lie about its figures, and
// charts with nothing finite to draw (vega's "Infinite extent" warnings on the terminal).
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, PROGRAMS, tempDir } from '../support/paths.js';
import { runDir } from '../support/runs.js';

/** An arm name that breaks Vega expressions (line break, `\"`) and XML (ESC, BEL). */
const EVIL = 'two\nlines \\" \x1b[31mred\x07 \u2028end';

/** An arm name that Vega compiles but writes raw into the SVG. */
const ESC = 'esc\x1b[31mred\x07';

/** Two compares; `evil` names the first stage and its baseline arm with EVIL; the other arm is ESC. */
function experiment(dir: string, name: string, evil: boolean, program = join(PROGRAMS, 'alloc-batch.mjs')): string {
  const arm = evil ? EVIL : 'base';
  const file = join(dir, `${name}.json`);
  const exp = {
    name,
    workload: { kind: 'command', command: ['node', program], protocol: 'required', params: { batch_size: 2 } },
    limits: { timeout: '30s' },
    measure: { warmup_steps: 1, steps: 3 },
    stages: [
      // The hostile arm is the baseline: its name goes into the ratio axis title.
      { kind: 'compare', name: `arms\n${arm}`, param: 'tag', arms: [arm, ESC], repeats: 2, max_rounds: 4 },
      // Two rounds give no CI: a chart with nothing finite to draw.
      { kind: 'compare', name: 'few', param: 'level', arms: [1, 2], repeats: 2, max_rounds: 2 },
    ],
  };
  writeFileSync(file, JSON.stringify(exp));
  return file;
}

function run(args: string[]) {
  return execa(process.execPath, [CLI, ...args], { reject: false, env: { GITHUB_STEP_SUMMARY: '' } });
}

/** Every file a report writes: report.html, summary.md and the charts. */
function reportFiles(dir: string): string[] {
  return [
    join(dir, 'report.html'),
    join(dir, 'summary.md'),
    ...readdirSync(join(dir, 'charts')).map((f) => join(dir, 'charts', f)),
  ];
}

/** Characters outside XML 1.0's Char production, and C1 controls. */
const NOT_XML = /[^\t\n\r\u0020-\u007e\u00a0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** A strict well-formedness check: allowed characters, balanced tags, no stray `<` or `&` in text. */
function assertWellFormedXml(text: string, file: string): void {
  assert.doesNotMatch(text, NOT_XML, `${file}: a character XML does not allow`);
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/y;
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = text.slice(i, lt < 0 ? text.length : lt);
    assert.doesNotMatch(chunk, /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/, `${file}: a bare & in text`);
    if (lt < 0) break;
    tag.lastIndex = lt;
    const m = tag.exec(text);
    assert.ok(m, `${file}: not a well-formed tag at ${lt}: ${text.slice(lt, lt + 80)}`);
    if (m[1]) assert.equal(stack.pop(), m[2], `${file}: </${m[2]}> closes another element`);
    else if (!m[4]) stack.push(m[2]!);
    i = tag.lastIndex;
  }
  assert.deepEqual(stack, [], `${file}: elements left open`);
}

describe('reports of hostile names and numbers', { timeout: 240_000 }, () => {
  let dir = '';
  let first: Awaited<ReturnType<typeof run>>;
  let plainDir = '';
  let plain: Awaited<ReturnType<typeof run>>;
  before(async () => {
    const out = join(tempDir(), 'out');
    first = await run(['run', experiment(tempDir(), 'names', true), '--out', out, '--quiet']);
    dir = runDir(out, 'names');
    // The same stages with plain names: what the hostile names break does not hide the other attacks.
    plain = await run(['run', experiment(tempDir(), 'plain', false), '--out', out, '--quiet']);
    plainDir = runDir(out, 'plain');
  });

  it('a line break, `\\"`, ESC and BEL in an arm and a stage name: the run finishes and its charts are drawn', () => {
    assert.equal(first.exitCode, 0, first.stderr);
    const runJson = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { status: string };
    assert.equal(runJson.status, 'finished');
    const svgs = readdirSync(join(dir, 'charts')).filter((f) => f.endsWith('.svg'));
    assert.ok(
      svgs.some((f) => f.startsWith('compare-arms')),
      svgs.join(', '),
    );
  });

  it('ESC and BEL in names: every SVG is well-formed XML and report.html holds no raw control character', () => {
    for (const d of [plainDir, dir]) {
      for (const f of readdirSync(join(d, 'charts')).filter((x) => x.endsWith('.svg')))
        assertWellFormedXml(readFileSync(join(d, 'charts', f), 'utf8'), f);
      const html = readFileSync(join(d, 'report.html'), 'utf8');
      assert.doesNotMatch(html, /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/);
      assert.match(html, /esc␛\[31mred␇/, 'ESC and BEL show as symbols in the charts');
      assert.match(html, /esc\\x1b\[31mred\\x07/, 'ESC and BEL show as escapes in the text');
    }
    assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /two␊lines/, 'a line break shows as a symbol');
  });

  it('charts with no finite value: no vega warning on the terminal, the report says what was not drawn, and no report file holds Infinity or NaN', () => {
    assert.equal(plain.exitCode, 0, plain.stderr);
    assert.doesNotMatch(plain.stderr, /WARN|Infinite extent/);
    assert.equal(plain.stderr, '', 'nothing reaches the terminal with --quiet');
    const html = readFileSync(join(plainDir, 'report.html'), 'utf8');
    assert.match(html, /not drawn: it has no finite value to plot/);
    assert.match(html, /Left out for lack of finite values: [^<]*memory_mib/);
    for (const f of reportFiles(plainDir)) assert.doesNotMatch(readFileSync(f, 'utf8'), /Infinity|NaN/, f);
  });

  it('a run.json edited to claim 8000 samples/s: `tunebench report` takes the figures from the journal and warns', async () => {
    const copy = join(tempDir(), 'copy');
    cpSync(plainDir, copy, { recursive: true });
    const honest = await run(['report', copy]);
    assert.equal(honest.exitCode, 0, honest.stderr);
    assert.doesNotMatch(honest.stderr, /disagrees/, 'an unedited run.json agrees with its journal');
    const path = join(copy, 'run.json');
    const runJson = JSON.parse(readFileSync(path, 'utf8')) as {
      result: {
        stages: { result: { arms: { throughput: { estimate: number } | null }[] } }[];
        evidence: Record<string, { samples_per_second: { estimate: number } | null }>;
      };
    };
    for (const arm of runJson.result.stages[0]!.result.arms) if (arm.throughput) arm.throughput.estimate = 8000;
    for (const e of Object.values(runJson.result.evidence))
      if (e.samples_per_second) e.samples_per_second.estimate = 8000;
    writeFileSync(path, JSON.stringify(runJson, null, 2));
    const lied = await run(['report', copy]);
    assert.equal(lied.exitCode, 0, lied.stderr);
    assert.match(lied.stderr, /run\.json disagrees with trials\.jsonl on stages, evidence .*edited/);
    const summary = readFileSync(join(copy, 'summary.md'), 'utf8');
    assert.doesNotMatch(summary, /\b8000(\.0)?\b/, 'no figure from the edited run.json');
    assert.match(summary, /run\.json disagrees with trials\.jsonl/);
  });

  it('a workload that makes the reports unwritable: the run still finishes, with a warning naming the failure', async () => {
    const work = tempDir();
    const program = join(work, 'sabotage.mjs');
    // The run directory is two levels above the events file (<run>/.scratch/<trial>.events.jsonl):
    // a regular file in place of its charts folder makes every report write fail.
    writeFileSync(
      program,
      `import { existsSync, rmSync, writeFileSync } from 'node:fs';\nimport { dirname, join } from 'node:path';\n` +
        `let d = dirname(process.env.TUNEBENCH_EVENTS);\n` +
        `while (!existsSync(join(d, 'run.json')) && dirname(d) !== d) d = dirname(d);\n` +
        `rmSync(join(d, 'charts'), { recursive: true, force: true });\n` +
        `writeFileSync(join(d, 'charts'), 'not a folder');\n` +
        `await import(${JSON.stringify(join(PROGRAMS, 'alloc-batch.mjs'))});\n`,
    );
    const out = join(work, 'out');
    const r = await run(['run', experiment(work, 'sabotage', false, program), '--out', out]);
    const path = runDir(out, 'sabotage');
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /warning: the reports could not be written \(.*charts.*not a folder.*tunebench report/);
    const runJson = JSON.parse(readFileSync(join(path, 'run.json'), 'utf8')) as {
      status: string;
      result: { warnings: { kind: string; run_dir?: string }[] };
    };
    assert.equal(runJson.status, 'finished');
    // A typed warning: its kind and the run it names (the sentence is made where it is printed).
    assert.ok(runJson.result.warnings.some((w) => w.kind === 'reports-not-written' && w.run_dir === path));
    rmSync(join(path, 'charts'));
    const again = await run(['report', path]);
    assert.equal(again.exitCode, 0, again.stderr);
    assert.ok(readFileSync(join(path, 'report.html'), 'utf8').includes('<h1>tunebench: sabotage</h1>'));
  });

  it('compare of two runs in which no metric has a CI (one trial each) writes compare.html (issue 45)', async () => {
    const dir = tempDir();
    const file = join(dir, 'once.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'once',
        workload: {
          kind: 'command',
          command: ['node', join(PROGRAMS, 'alloc-batch.mjs')],
          protocol: 'required',
          params: { batch_size: 2 },
        },
        limits: { timeout: '30s' },
        measure: { warmup_steps: 0, steps: 2 },
        stages: [{ kind: 'sweep', params: { tag: ['a', 'b'] }, strategy: 'grid', repeats: 1 }],
      }),
    );
    const runs: string[] = [];
    for (const name of ['before', 'after']) {
      const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, name), '--json'], {
        reject: false,
      });
      assert.equal(r.exitCode, 0, r.stderr);
      runs.push((JSON.parse(r.stdout) as { run_dir: string }).run_dir);
    }
    const out = join(dir, 'compare');
    const c = await execa(process.execPath, [CLI, 'compare', runs[0]!, runs[1]!, '--out', out], { reject: false });
    assert.equal(c.exitCode, 0, c.stderr);
    assert.ok(readdirSync(out).includes('compare.html'), readdirSync(out).join(', '));
  });
});
