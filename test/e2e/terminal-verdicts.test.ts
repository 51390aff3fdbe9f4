// What a person reads at the end of a run: every stage's answer on the terminal, in the words of
// summary.md, and in --json. A claim's verdict once lived only in summary.md (its sentence left the notes
// and the progress printer never learned it); these tests read the terminal so that no change of where a
// fact is stored can silence a verdict again. The claims and the compare run on simulated step times
// (test/fixtures/programs/simulated-steps.mjs), so each verdict comes out the same on a loaded machine.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, FIXTURES, ROOT, tempDir } from '../support/paths.js';
import { runDir } from '../support/runs.js';
import { requireSystem } from '../support/system.js';
import type { ClaimSummary, MaxBatchSummary } from '../../harness/domain/index.js';

/** Markdown's escapes undone: summary.md escapes `>`, `[`, `_` and the like. */
const unescapeMd = (s: string) => s.replace(/\\([\\`*_{}[\]()#+\-.!<>|])/g, '$1');

/** The lines of a stream that start with `answer: `, without it. */
const answers = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('answer: '))
    .map((l) => l.slice('answer: '.length));

describe('every stage prints its answer on the terminal', () => {
  it('a claim file prints confirmed, falls short and inconclusive, and a compare its faster arm', async () => {
    const out = tempDir();
    const file = join(FIXTURES, 'experiments', 'terminal-verdicts.yaml');
    const r = await execa(process.execPath, [CLI, 'run', file, '--out', out], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    const dir = runDir(out, 'terminal-verdicts');
    const md = unescapeMd(readFileSync(join(dir, 'summary.md'), 'utf8'));
    const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
      result: { stages: { name: string; result: ClaimSummary }[] };
    };
    const claims = Object.fromEntries(run.result.stages.map((s) => [s.name, s.result]));
    const expected = { within: 'confirmed', short: 'falls short', beyond: 'exceeds', unsure: 'inconclusive' } as const;
    // While the run goes (stderr): each claim stage ends with its sentence, the one summary.md prints.
    const live = answers(r.stderr);
    for (const [name, verdict] of Object.entries(expected)) {
      const sentence = claims[name]!.sentence;
      assert.equal(claims[name]!.verdict, verdict, sentence);
      assert.match(sentence, new RegExp(`: ${verdict} \\(`));
      assert.ok(live.includes(sentence), `stage ${name}'s verdict on the terminal:\n${r.stderr}`);
      assert.ok(md.includes(sentence), `the same words in summary.md: ${sentence}`);
      // At the end (stdout): every claim again, named, after the warnings.
      assert.ok(answers(r.stdout).includes(`${name} (claim): ${sentence}`), r.stdout);
    }
    assert.match(
      claims['short']!.sentence,
      /falls short \(the CI .* lies entirely below 5x to 10x: a smaller effect\)/,
    );
    assert.match(claims['beyond']!.sentence, /exceeds \(the CI .* lies entirely above 1\.5x to 2x/);
    // The compare's verdicts, live and at the end: half the work is faster, a quarter more is slower.
    const arms =
      /work=0\.5 vs 1: faster, throughput \+\d+\.\d% \[\+\d+\.\d%, \+\d+\.\d%\]; work=1\.25 vs 1: slower, throughput -\d+\.\d% \[-\d+\.\d%, -\d+\.\d%\]/;
    assert.match(r.stderr, new RegExp(`answer: ${arms.source}`));
    assert.match(r.stdout, new RegExp(`^answer: halved \\(compare\\): ${arms.source} .*kept work=0\\.5$`, 'm'));
    // The last lines: answers, then the chosen config (the compare chose work=0.5), then the files.
    const tail = r.stdout.trimEnd().split('\n').slice(-9);
    assert.deepEqual(
      tail.map((l) => l.split(':')[0]),
      ['answer', 'answer', 'answer', 'answer', 'answer', 'chosen', 'run directory', 'summary', 'report'],
      r.stdout,
    );
    assert.match(r.stdout, /^chosen: .*work=0\.5/m);
  });

  it("--json lists every stage's answer with its verdict", async () => {
    const out = tempDir();
    const file = join(FIXTURES, 'experiments', 'terminal-verdicts.yaml');
    const r = await execa(process.execPath, [CLI, 'run', file, '--out', out, '--json', '--quiet'], {
      reject: false,
    });
    assert.equal(r.exitCode, 0, r.stderr);
    const json = JSON.parse(r.stdout) as { answers: { stage: string; kind: string; verdict: string; line: string }[] };
    assert.deepEqual(
      json.answers.map((a) => [a.stage, a.kind, a.verdict]),
      [
        ['within', 'claim', 'confirmed'],
        ['short', 'claim', 'falls short'],
        ['beyond', 'claim', 'exceeds'],
        ['unsure', 'claim', 'inconclusive'],
        ['halved', 'compare', 'work=0.5 faster, work=1.25 slower'],
      ],
    );
  });

  it(
    'a seed claim file (claims only) ends with its verdict and names no chosen config',
    { skip: requireSystem('torch') },
    async () => {
      const out = tempDir();
      const file = join(ROOT, 'experiments', 'claims', 'collate.yaml');
      const r = await execa(process.execPath, [CLI, 'run', file, '--out', out], { reject: false });
      assert.equal(r.exitCode, 0, r.stderr);
      const verdict = /: (confirmed|falls short|exceeds|inconclusive) \(/;
      assert.match(r.stderr, new RegExp(`answer: Claim "1\\.5-2x" .*${verdict.source}`));
      assert.match(r.stdout, /^chosen: nothing \(no stage chose a setting\)$/m);
      assert.doesNotMatch(r.stdout, /^chosen: .*pattern=/m, 'the baseline settings are not a choice');
      const last = answers(r.stdout).at(-1) ?? '';
      assert.match(last, /^preallocated \(claim\): Claim "1\.5-2x" \(variant=append -> variant=preallocated, /);
      assert.match(last, verdict);
    },
  );

  it('a max-batch stage prints its max and the batch written', async () => {
    const out = tempDir();
    const file = join(FIXTURES, 'experiments', 'command-max-batch.yaml');
    const r = await execa(process.execPath, [CLI, 'run', file, '--out', out], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    const dir = runDir(out, 'command-max-batch');
    const run = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as {
      result: { stages: { result: MaxBatchSummary }[] };
    };
    const s = run.result.stages[0]!.result;
    assert.equal(s.status, 'exact');
    const line = `batch_size: max ${s.max} (exact: ${s.smallestFail} failed; `;
    assert.ok(
      answers(r.stderr).some((a) => a.startsWith(line)),
      r.stderr,
    );
    assert.ok(
      answers(r.stdout).some(
        (a) => a.startsWith(`max-batch-1 (max-batch): ${line}`) && a.includes(`written ${s.chosen}`),
      ),
      r.stdout,
    );
  });
});
