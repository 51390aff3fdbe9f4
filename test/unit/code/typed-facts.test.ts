// Facts are typed and worded only where printed: a stage's notes, a run's warnings, a trial's role and a
// history finding hold no sentence (the compiler refuses one), and the functions that word notes and
// warnings are called only by the code that prints (report/, cli/, the engine's progress lines).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { errorsByLine } from '../../support/type-probe.js';
import { ROOT } from '../../support/paths.js';

const HEAD =
  "import type { Role, RunWarning, StageNote, TrialRecord } from './domain/index.js';\n" +
  "import type { StageOutcome } from './experiment/schema.js';\n" +
  "import type { Finding } from './history/render.js';\n";

/** Every .ts file under harness/, relative to the repository. */
function harnessFiles(dir = join(ROOT, 'harness')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? harnessFiles(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [relative(ROOT, join(dir, e.name))]
        : [],
  );
}

/** Whether a source uses noteText or warningText outside its imports (called, or handed to map). */
const calls = (text: string): boolean =>
  text.split('\n').some((l) => !/^import\b|^\s+(type )?\w+,$/.test(l) && /\b(noteText|warningText)\b/.test(l));

describe('typed facts', () => {
  it('a sentence is not a note, a warning, a role, a finding or how a trial ended', () => {
    const sentence = "'batch 408 timed out in a probe'";
    const lines = [
      `const a: StageNote = ${sentence}; void a;`,
      `const b: StageOutcome['notes'][number] = ${sentence}; void b;`,
      `const c: RunWarning = ${sentence}; void c;`,
      `const d: Role = ${sentence}; void d;`,
      `const e: Finding = ${sentence}; void e;`,
      `const f: NonNullable<TrialRecord['ended_by']> = ${sentence}; void f;`,
    ];
    const errors = errorsByLine('harness/errors.ts', HEAD, lines);
    assert.deepEqual(
      lines.map((_, i) => errors.get(i)?.some((m) => /is not assignable to type/.test(m)) ?? false),
      lines.map(() => true),
      JSON.stringify([...errors]),
    );
    assert.equal(errors.get(-1), undefined, `the probe's imports compile: ${JSON.stringify(errors.get(-1))}`);
  });

  it('the probe accepts a note with its figures, and refuses one without them', () => {
    const errors = errorsByLine('harness/errors.ts', HEAD, [
      "const a: StageNote = { kind: 'none-fits', smallest: 64 }; void a;",
      "const b: StageNote = { kind: 'none-fits' }; void b;",
    ]);
    assert.equal(errors.get(0), undefined);
    assert.ok(errors.get(1)?.length, 'a note without its figures does not build');
  });

  it('notes and warnings are worded only by the code that prints them', () => {
    const printers = (f: string) =>
      f.startsWith('harness/report/') || f.startsWith('harness/cli/') || f === 'harness/engine/run-experiment.ts';
    const callers = harnessFiles().filter((f) => calls(readFileSync(join(ROOT, f), 'utf8')));
    assert.ok(
      callers.includes('harness/report/tables.ts'),
      `the scan finds the report's callers: ${callers.join(', ')}`,
    );
    assert.deepEqual(
      callers.filter((f) => !printers(f)),
      [],
    );
  });
});
