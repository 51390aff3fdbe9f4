// A stage kind is one module: a toy kind is added to a copy of the source tree, and the compiler judges
// the copy. Whole, the toy touches three files (the kind's schemas beside the others', its module, the
// table of modules) and the whole tree builds; a module that lacks a part, or a kind with no module, does
// not build, and the compiler's message names what is missing.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { ROOT, tempDir } from '../../support/paths.js';

const SCHEMAS = 'harness/experiment/schema/stages.ts';
const TABLE = 'harness/engine/kinds/index.ts';
const MODULE = 'harness/engine/kinds/toy.ts';

/** Replaces `anchor` in a file's text, failing when the anchor is gone (the test then says which). */
function edit(text: string, anchor: string, replacement: string, file: string): string {
  assert.ok(text.includes(anchor), `${file} no longer contains ${JSON.stringify(anchor)}: update the toy kind`);
  return text.replace(anchor, replacement);
}

/** The toy kind's spec and result, beside the other kinds' in the schema file. */
function withToySchemas(text: string): string {
  let out = edit(
    text,
    "export const STAGE_KINDS = ['max-batch', 'sweep', 'compare', 'claim'] as const;",
    "export const STAGE_KINDS = ['max-batch', 'sweep', 'compare', 'claim', 'toy'] as const;\n" +
      "export const toyStage = object({ kind: z.literal('toy'), name: stageName, steps: stepsOverride, " +
      'warmup_trials: warmupTrials });',
    SCHEMAS,
  );
  out = edit(out, 'compareStage, claimStage]);', 'compareStage, claimStage, toyStage]);', SCHEMAS);
  out = edit(
    out,
    "  z.object({ kind: z.literal('claim'), ...outcomeBase, result: claimSummarySchema }),\n",
    "  z.object({ kind: z.literal('claim'), ...outcomeBase, result: claimSummarySchema }),\n" +
      "  z.object({ kind: z.literal('toy'), ...outcomeBase, result: z.object({ trials: z.number() }) }),\n",
    SCHEMAS,
  );
  return out;
}

/** The toy kind's module: every part, each doing the least a kind may. */
const TOY_MODULE = `import { groupsByConfig } from '../stages/lower-after-failure.js';
import type { StageKindModule } from './types.js';

export const toyKind: StageKindModule<'toy'> = {
  check: () => undefined,
  use: () => ({ runs: [{ varied: new Map(), commands: [], usesDefault: true }], passesOn: true, values: [], conditional: [] }),
  run: async (input, spec, name) => {
    const steps = spec.steps ?? input.experiment.measure.steps;
    const record = await input.trials.run(
      { stage: name, role: { kind: 'probe' }, config: { ...input.baseConfig }, measure: { warmupSteps: 0, steps } },
      { n: 1, ofAbout: 1, show: [] },
    );
    return { kind: 'toy', name, chosen: {}, evidence: {}, notes: [], result: { trials: record.index + 1 } };
  },
  plannedTrials: () => 1,
  failed: () => false,
  failureAtBatch: { groups: groupsByConfig, wholeConfigs: false, lightest: () => null },
  blocks: () => [[], []],
  charts: () => ({ charts: [], representative: undefined }),
  answer: (r) => ({ verdict: 'ran', line: \`\${r.trials} trial(s)\` }),
  keyMetrics: () => [],
  source: () => null,
};
`;

function withToyEntry(text: string): string {
  let out = edit(
    text,
    "import { sweepKind } from './sweep.js';",
    "import { sweepKind } from './sweep.js';\nimport { toyKind } from './toy.js';",
    TABLE,
  );
  out = edit(out, '  claim: claimKind,\n', '  claim: claimKind,\n  toy: toyKind,\n', TABLE);
  return out;
}

/** A copy of the source tree (harness/, package.json, the installed packages linked) to add the toy to. */
function copyTree(): string {
  const dir = tempDir('tunebench-toy-kind-');
  cpSync(join(ROOT, 'harness'), join(dir, 'harness'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function program(dir: string, old?: ts.Program): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    },
  );
  assert.ok(config);
  const roots = ts.sys.readDirectory(join(dir, 'harness'), ['.ts']);
  return ts.createProgram({
    rootNames: roots,
    options: { ...config.options, rootDir: dir, noEmit: true },
    oldProgram: old,
  });
}

/** Every error of the files under dir: "path: message". */
function errors(p: ts.Program, dir: string, only?: readonly string[]): string[] {
  const files = p
    .getSourceFiles()
    .filter((f) => f.fileName.startsWith(dir) && (!only || only.includes(relative(dir, f.fileName))));
  return files.flatMap((f) =>
    [...p.getSyntacticDiagnostics(f), ...p.getSemanticDiagnostics(f)].map(
      (d) => `${relative(dir, f.fileName)}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
    ),
  );
}

/** The files of the copy that differ from the source tree. */
function touched(dir: string): string[] {
  return ts.sys
    .readDirectory(join(dir, 'harness'), ['.ts'])
    .map((f) => relative(dir, f))
    .filter((f) => {
      try {
        return readFileSync(join(ROOT, f), 'utf8') !== readFileSync(join(dir, f), 'utf8');
      } catch {
        return true;
      }
    })
    .sort();
}

describe('a stage kind is one module', () => {
  const dir = copyTree();
  const write = (f: string, text: string) => writeFileSync(join(dir, f), text);
  const original = (f: string) => readFileSync(join(ROOT, f), 'utf8');

  it('a toy kind touches three files, and the whole tree builds with it', () => {
    write(SCHEMAS, withToySchemas(original(SCHEMAS)));
    write(MODULE, TOY_MODULE);
    write(TABLE, withToyEntry(original(TABLE)));
    assert.deepEqual(touched(dir), [TABLE, MODULE, SCHEMAS].sort());
    assert.deepEqual(errors(program(dir), dir), []);
  });

  it('a module without a part does not build, and the error names the part', () => {
    write(MODULE, TOY_MODULE.replace('  keyMetrics: () => [],\n', ''));
    const found = errors(program(dir), dir, [MODULE]);
    assert.ok(
      found.some((e) => /keyMetrics/.test(e)),
      `expected an error naming keyMetrics, got: ${found.join('; ')}`,
    );
    write(MODULE, TOY_MODULE);
  });

  it('a kind without a module does not build, and the error names the kind', () => {
    write(TABLE, original(TABLE));
    const found = errors(program(dir), dir, [TABLE]);
    assert.ok(
      found.some((e) => /\btoy\b/.test(e)),
      `expected an error naming the toy kind, got: ${found.join('; ')}`,
    );
  });
});
