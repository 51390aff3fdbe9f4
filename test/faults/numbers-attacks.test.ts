// A workload that lies with numbers and writes hostile text (issue 15, items 8, 12, 15 and 16):
// steps of 1e300 samples in 1e-300 s, byte counts of 1.7e308, a data wait longer than its step, and
// messages and parameter values holding CR, pipes, HTML and terminal escape sequences. The sweep
// must not crown the liar, every report must show plain finite numbers and literal text, and the
// terminal must get no control sequence that the workload wrote.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { createProgress, terminalText } from '../../harness/cli/progress.js';
import type { TrialRecord } from '../../harness/domain/index.js';
import { CLI, tempDir } from '../support/paths.js';
import { journal, runDir } from '../support/runs.js';

const HOSTILE = 'bad\r# pwned | <img src=x onerror=alert(1)> \x1b]0;owned\x07\x1b[2J\x9b31m\x00';

const WORKLOAD = `
import { appendFileSync } from 'node:fs';
const config = JSON.parse(process.env.TUNEBENCH_CONFIG);
const emit = (e) => appendFileSync(process.env.TUNEBENCH_EVENTS, JSON.stringify(e) + '\\n');
const warmup = Number(process.env.TUNEBENCH_WARMUP_STEPS ?? 0);
const steps = Number(process.env.TUNEBENCH_STEPS) + warmup;
for (let i = 0; i < steps; i++) {
  const w = i < warmup;
  if (config.tag === 'tiny') emit({ event: 'step', samples: 1e300, seconds: 1e-300, warmup: w });
  else if (config.tag === 'huge') emit({ event: 'step', samples: 1.7e308, seconds: 1, data_wait_seconds: 5, warmup: w });
  else emit({ event: 'step', samples: 64, seconds: 0.01 * (1 + 0.02 * Math.random()), data_wait_seconds: 0.001, warmup: w });
}
emit({ event: 'memory', peak_bytes: config.tag === 'real' ? 1e6 : 1.7e308 });
if (String(config.tag).startsWith('evil')) {
  emit({ event: 'error', message: ${JSON.stringify(HOSTILE)} });
  process.exit(87);
}
emit({ event: 'done' });
`;

function experiment(dir: string): string {
  const program = join(dir, 'liar.mjs');
  writeFileSync(program, WORKLOAD);
  const file = join(dir, 'liar.json');
  const exp = {
    name: 'liar',
    workload: { kind: 'command', command: ['node', program], protocol: 'required', params: { batch_size: 64 } },
    limits: { timeout: '30s' },
    measure: { warmup_steps: 1, steps: 3 },
    stages: [
      {
        kind: 'sweep',
        name: 'tags',
        params: { tag: ['real', 'tiny', 'huge', `evil|x\r# heading\x1b[31m`] },
        strategy: 'grid',
        repeats: 3,
      },
      { kind: 'sweep', name: 'alone', params: { level: [1] }, strategy: 'grid', repeats: 3 },
    ],
  };
  writeFileSync(file, JSON.stringify(exp, null, 2));
  return file;
}

/** C0 and C1 controls other than LF, and DEL: nothing of them may reach a plain terminal. */
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('a workload that lies with numbers and writes hostile text', { timeout: 180_000 }, () => {
  it(
    'a workload reporting 1e300 samples in 1e-300 s, 1.7e308 samples and hostile text is not chosen, ' +
      'its events count as malformed, and every report and `tunebench report` stay finite and literal',
    async () => {
      const dir = tempDir();
      const out = join(dir, 'out');
      const r = await execa(process.execPath, [CLI, 'run', experiment(dir), '--out', out], {
        reject: false,
        env: { GITHUB_STEP_SUMMARY: '' },
      });
      const run = runDir(out, 'liar');
      const records: TrialRecord[] = journal(run);
      const summary = readFileSync(join(run, 'summary.md'), 'utf8');
      const html = readFileSync(join(run, 'report.html'), 'utf8');
      const chosenJson = readFileSync(join(run, 'chosen-config.json'), 'utf8');
      const chosen = JSON.parse(chosenJson) as {
        config: Record<string, unknown>;
        evidence: Record<
          string,
          { rule: string; samples_per_second: { estimate: number; low: number; high: number } | null }
        >;
      };

      // Item 8: the liars' steps are malformed, never measured, never chosen.
      for (const tag of ['tiny', 'huge']) {
        const rs = records.filter((x) => x.config['tag'] === tag);
        assert.ok(rs.length >= 1, tag);
        for (const x of rs) {
          assert.ok(x.malformed_events >= 4, `${tag}: ${x.malformed_events} malformed event(s)`);
          assert.notEqual(x.outcome, 'ok', `${tag}: ${x.reason}`);
          assert.equal(x.samples_per_second, null, tag);
          assert.ok(
            x.steps.every((s) => Number.isFinite(s.samples / s.seconds)),
            tag,
          );
        }
      }
      assert.equal(chosen.config['tag'], 'real', r.stderr);
      const ci = chosen.evidence['tag']!.samples_per_second!;
      assert.ok(
        [ci.estimate, ci.low, ci.high].every((v) => typeof v === 'number' && Number.isFinite(v)),
        chosenJson,
      );
      for (const [name, text] of [
        ['summary.md', summary],
        ['report.html', html],
        ['chosen-config.json', chosenJson],
      ] as const) {
        assert.doesNotMatch(text, /Infinity|NaN/, name);
      }
      assert.doesNotMatch(chosenJson, /"(estimate|low|high|point)": null/);
      const again = await execa(process.execPath, [CLI, 'report', run], { reject: false });
      assert.equal(again.exitCode, 0, again.stderr);

      // Item 12: a one-config stage says what is true.
      assert.doesNotMatch(chosen.evidence['level']!.rule, /significantly|better|faster/);
      assert.match(chosen.evidence['level']!.rule, /only config that ran/);

      // Item 15: no heading, no raw HTML, no broken table row in summary.md.
      const lines = summary.split(/\r\n|\r|\n/);
      assert.ok(!lines.some((l) => /^\s*(?:[-*+]\s+)?#+ *(pwned|heading)/.test(l)), 'a heading made by a workload');
      assert.doesNotMatch(summary, /(^|[^\\])<img/);
      assert.ok(!CONTROLS.test(summary), 'a control character in summary.md');
      assert.ok(!html.includes('<img'), 'raw HTML in report.html');

      // Item 16: the progress output holds no control character that the workload wrote.
      assert.ok(
        !CONTROLS.test(r.stderr),
        `control characters on the terminal: ${JSON.stringify(r.stderr.match(new RegExp(CONTROLS.source, 'g')))}`,
      );
      assert.match(r.stderr, /\\x1b\[31m/, 'the escape sequence is shown as text');
    },
  );
});

describe('progress output with hostile text', () => {
  const capture = () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    });
    return { stream, text: () => text };
  };

  it('terminalText shows C0 and C1 controls, DEL and line breaks as escapes and keeps the rest', () => {
    assert.equal(terminalText('a\x1b]0;t\x07b'), 'a\\x1b]0;t\\x07b');
    assert.equal(terminalText('x\ry\nz\tw'), 'x\\ry\\nz\\tw');
    assert.equal(terminalText('\x9b2J\x7f'), '\\x9b2J\\x7f');
    assert.equal(terminalText('\u202etxt.exe\u2028'), '\\u202etxt.exe\\u2028');
    assert.equal(
      terminalText('batch_size=64 -> ok 120.5 samples/s (1.2 s) é 漢'),
      'batch_size=64 -> ok 120.5 samples/s (1.2 s) é 漢',
    );
  });

  it('plain mode: a note, a stage description and parameter values reach the stream escaped', () => {
    const c = capture();
    const p = createProgress('plain', c.stream);
    p.stage('s', `sweep on ${HOSTILE}`);
    p.trialStart({ stage: 's', n: 1, ofAbout: 2, config: { tag: HOSTILE }, role: 'grid', show: ['tag'] });
    p.trialEnd({
      config: { tag: HOSTILE },
      outcome: 'invalid',
      samples_per_second: null,
      wall_seconds: 0.5,
      reason: HOSTILE,
    } as unknown as TrialRecord);
    p.note(`failed: ${HOSTILE}`);
    p.finish();
    const text = c.text();
    assert.ok(!CONTROLS.test(text), JSON.stringify(text));
    assert.equal(text.split('\n').length, 4, 'one line each (and the empty rest), no line break from the workload');
    assert.match(text, /bad\\r# pwned .*\\x1b\]0;owned\\x07\\x1b\[2J\\x9b31m\\x00/);
  });

  it("tty mode: the only escape sequences are tunebench's own line clears", () => {
    const c = capture();
    const p = createProgress('tty', c.stream);
    p.stage('s', 'x');
    p.trialStart({ stage: 's', n: 1, ofAbout: 2, config: { tag: HOSTILE }, role: 'grid', show: ['tag'] });
    p.trialEvent({ event: 'step', samples: 1, seconds: 1 });
    p.note(HOSTILE);
    p.finish();
    const own = c.text().replace(/\r\x1b\[K/g, '');
    assert.ok(!CONTROLS.test(own), JSON.stringify(own));
  });
});
