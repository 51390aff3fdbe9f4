// npm test: every test file of the built suites, one file at a time, under node's test runner. No file
// may depend on another having run first (a service it needs, a file another leaves): the order is a
// setting, so that a run can prove it.
//   TUNEBENCH_TEST_ORDER  sorted (default) | reverse | shuffle | shuffle:<seed>
//   --list                print the files in that order, run nothing
// A shuffled run prints its seed; the same seed gives the same order again.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SUITES = ['unit', 'integration', 'e2e', 'faults', 'slurm'];

function testFiles(dir, into = []) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) testFiles(path, into);
    else if (entry.endsWith('.test.js')) into.push(path);
  }
  return into;
}

async function ordered(files, order) {
  const sorted = [...files].sort();
  if (order === 'sorted') return sorted;
  if (order === 'reverse') return sorted.reverse();
  const m = /^shuffle(?::(\d+))?$/.exec(order);
  if (!m) {
    console.error(
      `run-tests: TUNEBENCH_TEST_ORDER: expected sorted, reverse, shuffle or shuffle:<seed>, got ${JSON.stringify(order)}`,
    );
    process.exit(2);
  }
  const seed = m[1] === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(m[1]);
  console.log(`run-tests: test files in shuffled order, seed ${seed} (TUNEBENCH_TEST_ORDER=shuffle:${seed} repeats it)`);
  // The harness's own seeded generator (npm test builds before it runs this script).
  const { createRng } = await import(pathToFileURL(join(ROOT, 'dist', 'harness', 'stats', 'rng.js')).href);
  const next = createRng(seed);
  for (let i = sorted.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [sorted[i], sorted[j]] = [sorted[j], sorted[i]];
  }
  return sorted;
}

const dist = join(ROOT, 'dist', 'test');
const files = SUITES.flatMap((s) => testFiles(join(dist, s)));
if (files.length === 0) {
  console.error(`run-tests: no test files under ${relative(ROOT, dist)}: run npm run build first`);
  process.exit(1);
}
const order = process.env.TUNEBENCH_TEST_ORDER || 'sorted';
const list = await ordered(files, order);
// --list: the files in the order they would run, one a line; nothing runs.
if (process.argv.includes('--list')) {
  console.log(list.map((f) => relative(ROOT, f)).join('\n'));
  process.exit(0);
}
if (order !== 'sorted') console.log(`run-tests: first files: ${list.slice(0, 3).map((f) => relative(dist, f)).join(', ')}`);
if (order === 'sorted') {
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...list.map((f) => relative(ROOT, f))], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  process.exit(r.status ?? 1);
}
// `node --test` sorts the files it is given, so another order runs through node:test's run(), which keeps
// it: each file in a process of its own, one at a time, reported as TAP as `node --test` reports it.
const { run } = await import('node:test');
const { tap } = await import('node:test/reporters');
process.chdir(ROOT);
const stream = run({ files: list, concurrency: 1 });
stream.on('test:fail', () => {
  process.exitCode = 1;
});
stream.compose(tap).pipe(process.stdout);
