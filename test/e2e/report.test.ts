// `tunebench report`: every report rebuilt from run.json and the journal alone, byte for byte.
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { REPORT_CSP } from '../../harness/report/html.js';
import { CLI, FIXTURES, tempDir } from '../support/paths.js';
import { REPORT_FIXTURE } from '../support/runs.js';

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
    const specs = readdirSync(join(a, 'charts')).filter((f) => f.endsWith('.vl.json')).sort();
    assert.equal(specs.length, 7);
    for (const f of specs) {
      const text = readFileSync(join(a, 'charts', f));
      assert.ok(text.equals(readFileSync(join(b, 'charts', f))), `${f} differs between copies`);
      assert.ok(text.equals(readFileSync(join(FIXTURES, 'snapshots', f))), `${f} differs from its snapshot`);
    }
    for (const f of ['report.html', 'summary.md']) assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), `${f} differs between copies`);
    const html = readFileSync(join(a, 'report.html'), 'utf8');
    assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP.replace(/'/g, '&#39;')}">`));
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
    assert.match(bad.stderr, /run.json is not valid JSON .* damaged/);
  });
});
