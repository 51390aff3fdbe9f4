// `tunebench report`: every report rebuilt from run.json and the journal alone, byte for byte.
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { REPORT_CSP } from '../../harness/report/html.js';
import { CLI, FIXTURES, PROGRAMS, tempDir } from '../support/paths.js';
import { REPORT_FIXTURE, resultOf, runDir } from '../support/runs.js';
import { readRunJson } from '../../harness/experiment/run-file.js';

const RUN = REPORT_FIXTURE;

function copyRun(): string {
  const dir = join(tempDir(), 'somewhere', 'else');
  cpSync(RUN, dir, { recursive: true });
  return dir;
}

describe('tunebench report', () => {
  it('rebuilds identical spec files from a journal copied to another folder', async () => {
    const a = copyRun();
    const b = copyRun();
    for (const dir of [a, b]) {
      const r = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /16 files written/);
    }
    const specs = readdirSync(join(a, 'charts'))
      .filter((f) => f.endsWith('.vl.json'))
      .sort();
    assert.equal(specs.length, 7);
    for (const f of specs) {
      const text = readFileSync(join(a, 'charts', f));
      assert.ok(text.equals(readFileSync(join(b, 'charts', f))), `${f} differs between copies`);
      assert.ok(text.equals(readFileSync(join(FIXTURES, 'snapshots', f))), `${f} differs from its snapshot`);
    }
    for (const f of ['report.html', 'summary.md'])
      assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), `${f} differs between copies`);
    const html = readFileSync(join(a, 'report.html'), 'utf8');
    assert.ok(
      html.includes(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP.replace(/'/g, '&#39;')}">`),
    );
    assert.equal((html.match(/<figure class="chart"/g) ?? []).length, 7);
    assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org)/, 'no script and no remote URL');
  });

  it('warns about a journal cut short and still reports', async () => {
    const dir = copyRun();
    appendFileSync(join(dir, 'trials.jsonl'), '{"v":1,"index":99,"sta');
    const r = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stderr, /last line of trials.jsonl was cut short/);
  });

  it('names the problem when the folder is not a run directory or run.json is damaged', async () => {
    const empty = tempDir();
    const r = await execa(process.execPath, [CLI, 'report', empty], { reject: false });
    assert.equal(r.exitCode, 2);
    assert.match(r.stderr, /is not a run directory: run.json is missing/);
    const dir = copyRun();
    appendFileSync(join(dir, 'run.json'), 'garbage');
    const bad = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /run\.json:\d+: run\.json is damaged: not valid JSON .*damaged after tunebench wrote it/);
  });

  it('each stage section opens with its answer, and the charts and tables follow', async () => {
    const dir = copyRun();
    const r = await execa(process.execPath, [CLI, 'report', dir], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    const sections = html.split('<section class="stage"').slice(1);
    assert.equal(sections.length, 3);
    for (const s of sections) {
      const answer = s.indexOf('<div class="answer">\n<p>Answer: ');
      assert.ok(answer > 0, 'an answer');
      assert.ok(answer < s.indexOf('<figure class="chart"'), 'the answer precedes the first chart');
      assert.ok(
        s.indexOf('<figure class="chart"') < s.indexOf('<table>\n<tr><th>#</th>') || !s.includes('<th>#</th>'),
        'the trial table follows the charts',
      );
    }
    // A compare of the arena policy: the adapter's empty_cache count says nothing there.
    const arena = sections[2]!;
    assert.match(arena, /<th>arm<\/th>/);
    assert.doesNotMatch(arena, /empty_cache calls/);
    const md = readFileSync(join(dir, 'summary.md'), 'utf8');
    assert.doesNotMatch(md, /empty\\_cache calls/);
    assert.match(md, /## Stage arena \(compare\)\n\nAnswer: arena=keep at /);
  });

  it(
    'a sweep over four loader parameters: ' +
      'every config label in the ranked and stall charts is whole and names one config',
    async () => {
      const dir = tempDir();
      const file = join(dir, 'loader-labels.yaml');
      writeFileSync(
        file,
        [
          'name: loader-labels',
          'workload:',
          '  kind: command',
          `  command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(join(PROGRAMS, 'simulated-gpu.mjs'))}, ` +
            '"--hold-ms=1"]',
          '  protocol: required',
          '  params: { batch_size: 64 }',
          'limits: { timeout: 30s }',
          'measure: { warmup_steps: 0, steps: 2 }',
          'stages:',
          '  - kind: sweep',
          '    name: loader',
          '    params: { num_workers: [0, 1, 2], prefetch_factor: [2, 4], ' +
            'pin_memory: [false, true], persistent_workers: [false, true] }',
          '    applies_when: { prefetch_factor: num_workers, persistent_workers: num_workers }',
          '    strategy: grid',
          '    repeats: 2',
          '',
        ].join('\n'),
      );
      const r = await execa(process.execPath, [CLI, 'run', file, '--out', join(dir, 'out'), '--quiet'], {
        reject: false,
      });
      assert.equal(r.exitCode, 0, r.stderr);
      const run = runDir(join(dir, 'out'), 'loader-labels');
      const result = readRunJson(run, 'the test reads it').result;
      assert.ok(result, 'the run has a result');
      const sweep = resultOf(result.stages[0], 'sweep');
      const measured = sweep.configs.filter((c) => c.throughput?.estimate !== undefined && c.throughput !== null);
      assert.equal(measured.length, 18);
      for (const chart of ['ranked', 'stall']) {
        const svg = readFileSync(join(run, 'charts', `sweep-loader-${chart}.svg`), 'utf8');
        const spec = JSON.parse(readFileSync(join(run, 'charts', `sweep-loader-${chart}.vl.json`), 'utf8')) as {
          title: { subtitle?: string };
        };
        // The legend under the title: "nw = num_workers, pf = prefetch_factor, ...".
        const legend = new Map((spec.title.subtitle ?? '').split(', ').map((e) => e.split(' = ') as [string, string]));
        assert.ok(svg.includes(spec.title.subtitle!), 'the legend is drawn');
        const labels = axisLabels(svg).filter((l) => l.includes('='));
        assert.equal(labels.length, measured.length, `${chart}: one label per config: ${labels.join(' | ')}`);
        assert.equal(new Set(labels).size, labels.length, `${chart}: labels are unique`);
        for (const label of labels) {
          assert.ok(!label.includes('\u2026'), `${chart}: "${label}" is cut`);
          const named = label.split(' ').map((kv) => kv.split('='));
          const matches = sweep.configs.filter((c) =>
            named.every(([k, v]) => String(c.config[legend.get(k!) ?? k!]) === v),
          );
          assert.equal(matches.length, 1, `${chart}: "${label}" names ${matches.length} configs`);
        }
      }
    },
  );
});

/** The texts of a vega SVG's axis labels. */
function axisLabels(svg: string): string[] {
  const out: string[] = [];
  for (const group of svg.split('role-axis-label').slice(1)) {
    const body = group.slice(0, group.indexOf('</g>'));
    for (const m of body.matchAll(/<text[^>]*>([^<]*)<\/text>/g))
      out.push(m[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  }
  return out;
}
