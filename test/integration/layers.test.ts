// The layer rules of docs/architecture.md, as `npm run lint` checks them: the tree passes, and an
// import from a lower layer to a higher one (or any import out of domain/) fails the check.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ROOT, tempDir } from '../support/paths.js';

const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');

/** A copy of the harness sources and the lint configuration, to break on purpose. */
function copyTree(): string {
  const dir = tempDir();
  cpSync(join(ROOT, 'harness'), join(dir, 'harness'), {
    recursive: true,
    filter: (src) => !src.endsWith('.py') && !src.includes('__pycache__'),
  });
  for (const f of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) cpSync(join(ROOT, f), join(dir, f));
  return dir;
}

function cruise(cwd: string) {
  return execa(DEPCRUISE, ['harness', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
    cwd,
    reject: false,
    all: true,
  });
}

function addImport(dir: string, file: string, line: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const last = lines.map((l) => l.startsWith('import ')).lastIndexOf(true);
  lines.splice(last + 1, 0, line);
  writeFileSync(path, lines.join('\n'));
}

describe('layer rules (dependency-cruiser)', () => {
  it('the harness as it is has no upward import', async () => {
    const r = await cruise(ROOT);
    assert.equal(r.exitCode, 0, r.all);
  });

  it('an import from stats up to report fails, naming the rule and the edge', async () => {
    const dir = copyTree();
    addImport(dir, 'harness/stats/summary.ts', "import { writeReports } from '../report/write.js';");
    const r = await cruise(dir);
    assert.notEqual(r.exitCode, 0);
    assert.match(r.all ?? '', /no-upward-from-stats: harness\/stats\/summary\.ts → harness\/report\/write\.ts/);
  });

  it('a type-only import up counts too, and domain/ imports nothing of the project', async () => {
    const dir = copyTree();
    addImport(dir, 'harness/workloads/workload.ts', "import type { Experiment } from '../experiment/schema.js';");
    addImport(dir, 'harness/domain/params.ts', "import { stat } from '../telemetry/sampler.js';");
    const r = await cruise(dir);
    assert.notEqual(r.exitCode, 0);
    assert.match(
      r.all ?? '',
      /no-upward-from-workloads: harness\/workloads\/workload\.ts → harness\/experiment\/schema\.ts/,
    );
    assert.match(r.all ?? '', /domain-imports-nothing: harness\/domain\/params\.ts → harness\/telemetry\/sampler\.ts/);
  });
});
