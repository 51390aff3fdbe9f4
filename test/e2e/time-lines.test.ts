// What `tunebench time` and `tunebench claim` print: --quiet hides the progress and never the results,
// -L rows in the order given, and the foreign-load warning that `tunebench run` prints too.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa, type ResultPromise } from 'execa';
import { CLI, tempDir } from '../support/paths.js';

async function tunebench(args: string[]) {
  const cwd = tempDir();
  return execa(process.execPath, [CLI, ...args, '--out', join(cwd, 'reports')], { cwd, reject: false });
}

describe('tunebench time and claim on the terminal', () => {
  it('--quiet prints the table on stdout and no progress; -L rows keep the order given', async () => {
    const r = await tunebench(['time', '--quiet', '--runs', '3', '-L', 'd', '0.15,0.02', 'sleep {d}']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /trial \d+/, 'no progress with --quiet');
    const rows = r.stdout.split('\n').filter((l) => /^d=/.test(l));
    assert.deepEqual(
      rows.map((l) => l.split(/\s+/)[0]),
      ['d=0.15', 'd=0.02'],
      r.stdout,
    );
    assert.match(r.stdout, /^d=0\.02 .* best$/m);
    assert.match(r.stdout, /run directory: /);
  });

  it('claim --quiet prints the verdict sentence', async () => {
    const r = await tunebench([
      'claim',
      '>=2x faster',
      '--baseline',
      'sleep 0.3',
      '--candidate',
      'sleep 0.05',
      '--quiet',
      '--max-pairs',
      '5',
    ]);
    assert.doesNotMatch(r.stderr, /trial \d+/, 'no progress with --quiet');
    assert.match(r.stdout, /"?>=2x faster"? .*(confirmed|falls short|exceeds|inconclusive)/i, r.stdout);
    assert.match(r.stdout, /run directory: /);
  });

  describe('under foreign load', () => {
    const burners: ResultPromise[] = [];
    before(() => {
      for (let i = 0; i < 2; i++) burners.push(execa(process.execPath, ['-e', 'for (;;) {}'], { reject: false }));
    });
    after(() => {
      for (const b of burners) b.kill('SIGKILL');
    });

    it('time prints the foreign-load warning after the table, as run does', async () => {
      const r = await tunebench(['time', '--quiet', '--runs', '3', 'sleep 0.4', 'sleep 0.4']);
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, /^warning: Foreign load: \d+ of \d+ trials/m, r.stdout);
    });
  });
});
