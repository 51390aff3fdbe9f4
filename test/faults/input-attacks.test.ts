// Hostile inputs and signals (issue 31): every terminating signal stops a run cleanly, an experiment
// file that is not a regular file or describes an impossible grid is refused at once, SIGTERM is
// honoured within 2 s while tunebench reads its input, and `tunebench time` reports a command that
// failed at every run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { CLI, tempDir } from '../support/paths.js';
import { startHangingRun } from '../support/faults.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return !/State:\s+Z/.test(status);
  } catch {
    return false;
  }
};

/** Writes an experiment file and returns its path. */
function experimentFile(name: string, text: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

async function cli(args: string[], timeout = 30_000) {
  return execa(process.execPath, [CLI, ...args], { reject: false, timeout });
}

/** Starts a run whose trial hangs (and ignores SIGTERM), waits for the trial, sends `signal`, and reports. */
async function stopMidTrial(signal: NodeJS.Signals) {
  const { child, out, pids } = await startHangingRun({ timeout: 90_000 });
  child.kill(signal);
  const r = await child;
  const runDir = join(out, 'hangs', readdirSync(join(out, 'hangs'))[0]!);
  const run = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as { status: string };
  await new Promise((done) => setTimeout(done, 300));
  return { r, run, runDir, pids };
}

describe('terminating signals other than SIGINT and SIGTERM', { timeout: 120_000 }, () => {
  for (const signal of ['SIGHUP', 'SIGQUIT'] as const) {
    it(`${signal} mid-trial: exit 130, run.json stopped, the lock released, no trial process left`, async () => {
      const { r, run, runDir, pids } = await stopMidTrial(signal);
      assert.equal(r.exitCode, 130, `${r.signal ?? ''} ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`${signal} received`));
      assert.equal(run.status, 'stopped');
      assert.ok(!existsSync(join(runDir, '.lock')), 'the lock was released');
      for (const pid of [pids.child, pids.grandchild]) assert.ok(!alive(pid), `process ${pid} of the trial survived`);
    });
  }
});

const GOOD =
  'name: t\nworkload: { kind: command, command: [prog, "{x}"], params: { batch_size: 1 } }\n' +
  'stages: [{ kind: sweep, params: { x: [1, 2] } }]\n';

describe('experiment files that are not regular files', { timeout: 60_000 }, () => {
  it('a FIFO: validate and run exit 2 at once, naming the file and that it must be a regular file', async () => {
    const path = join(tempDir(), 'fifo.yaml');
    execFileSync('mkfifo', [path]);
    for (const args of [
      ['validate', path],
      ['run', path, '--out', tempDir()],
    ]) {
      const t0 = Date.now();
      const r = await cli(args, 10_000);
      assert.equal(r.exitCode, 2, `${args[0]}: ${r.stderr}`);
      assert.ok(r.stderr.includes(path), r.stderr);
      assert.match(r.stderr, /is a FIFO .*must be a regular file/);
      assert.ok(Date.now() - t0 < 5_000, `${args[0]} took ${Date.now() - t0} ms`);
    }
  });

  it('/dev/zero and a directory: exit 2, each named as not a regular file', async () => {
    const folder = join(tempDir(), 'folder.yaml');
    mkdirSync(folder);
    for (const [path, kind] of [
      ['/dev/zero', 'a character device'],
      [folder, 'a directory'],
    ] as const) {
      const r = await cli(['validate', path], 10_000);
      assert.equal(r.exitCode, 2, r.stderr);
      assert.ok(r.stderr.includes(path), r.stderr);
      assert.ok(r.stderr.includes(`is ${kind}`), r.stderr);
      assert.match(r.stderr, /must be a regular file/);
    }
  });
});

const hugeGrid = (budget: string) =>
  'name: t\nworkload: { kind: command, command: [prog, "{a}", "{b}", "{c}"], params: { batch_size: 1 } }\n' +
  'stages:\n  - kind: sweep\n' +
  '    params: { a: { range: [1, 1000] }, b: { range: [1, 1000] }, c: { range: [1, 1000] } }\n' +
  `    budget: ${budget}\n`;

describe('sweep grids too large to run', { timeout: 60_000 }, () => {
  it('a 1000^3 grid with a 5-trial budget: validate exits 2 at once with the grid size, the limit and the fix', async () => {
    const t0 = Date.now();
    const r = await cli(['validate', experimentFile('grid.yaml', hugeGrid('{ trials: 5 }'))]);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(
      r.stderr,
      /stages\[0\]\.params: .*1000 x 1000 x 1000 = 1000000000 configs, more than the 10000 a sweep may have/,
    );
    assert.match(r.stderr, /fewer values/);
    assert.ok(Date.now() - t0 < 5_000, `took ${Date.now() - t0} ms`);
  });

  it('a range of 10^15 values is counted, not expanded: exit 2 at once', async () => {
    const text = GOOD.replace('x: [1, 2]', 'x: { range: [0, 1e15] }');
    const r = await cli(['validate', experimentFile('range.yaml', text)], 10_000);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /1000000000000001 configs/);
  });
});

describe('SIGTERM while tunebench reads hostile input', { timeout: 60_000 }, () => {
  const hostile: [string, () => string][] = [
    [
      'a FIFO that nobody writes',
      () => {
        const path = join(tempDir(), 'fifo.yaml');
        execFileSync('mkfifo', [path]);
        return path;
      },
    ],
    ['a 1000^3 sweep grid', () => experimentFile('grid.yaml', hugeGrid('{ trials: 5 }'))],
  ];
  for (const [what, make] of hostile) {
    it(`run on ${what}: SIGTERM (or the refusal) ends it within 2 s`, async () => {
      const path = make();
      const child = execa(process.execPath, [CLI, 'run', path, '--out', tempDir()], {
        reject: false,
        timeout: 20_000,
      });
      await new Promise((done) => setTimeout(done, 700));
      const sent = Date.now();
      child.kill('SIGTERM');
      const r = await child;
      const ms = Date.now() - sent;
      assert.ok(!r.timedOut, `still running after 20 s: ${r.stderr}`);
      assert.ok(ms < 2_000, `took ${ms} ms after SIGTERM`);
      // Refused (2), stopped (130), or ended by the signal itself when it came after the refusal.
      assert.ok(
        r.exitCode === 2 || r.exitCode === 130 || r.signal === 'SIGTERM',
        `exit ${r.exitCode} ${r.signal}: ${r.stderr}`,
      );
    });
  }
});

describe('tunebench time with a command that fails at every run', { timeout: 120_000 }, () => {
  for (const order of [
    ['false', 'true'],
    ['true', 'false'],
  ]) {
    it(`time ${order.join(' ')}: exit 2, and time.md marks the failing command's row as failed`, async () => {
      const out = tempDir();
      const r = await cli(['time', '--runs', '3', '--out', out, ...order], 60_000);
      assert.equal(r.exitCode, 2, r.stderr);
      assert.match(r.stderr, /false failed at every run/);
      const dir = join(out, 'time', readdirSync(join(out, 'time'))[0]!);
      const rows = readFileSync(join(dir, 'time.md'), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('| `'));
      const row = (label: string) => rows.find((l) => l.startsWith(`| \`${label}\``))!;
      assert.match(row('false'), /\| failed \|$/);
      assert.doesNotMatch(row('true'), /failed/);
    });
  }
});

describe('names and numbers at the edges', { timeout: 60_000 }, () => {
  for (const name of ['__proto__', 'constructor', 'toString']) {
    it(`-L ${name}: refused as a reserved name, not "given twice"`, async () => {
      const r = await cli(['time', '-L', `${name}=1,2`, '--out', tempDir(), `echo {${name}}`]);
      assert.equal(r.exitCode, 2, r.stderr);
      assert.doesNotMatch(r.stderr, /given twice/);
      assert.ok(r.stderr.includes(name), r.stderr);
    });
  }

  it('a max-batch ceiling of 2^53: the message names the largest safe integer', async () => {
    const text =
      'name: t\nworkload: { kind: command, command: [prog, "{batch_size}"] }\n' +
      'stages: [{ kind: max-batch, ceiling: 9007199254740992 }]\n';
    const r = await cli(['validate', experimentFile('ceiling.yaml', text)]);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /stages\[0\]\.ceiling: expected at most 9007199254740991 .*got 9007199254740992/);
  });

  it('limits.memory: 1e21 is refused by validate, naming the field, the value and the bound', async () => {
    const r = await cli(['validate', experimentFile('mem.yaml', `limits: { memory: 1e21 }\n${GOOD}`)]);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /limits\.memory: expected at most 1\.00 PiB, got 1e\+21/);
  });

  it("limits.memory above this machine's memory: run refuses it before the first trial, naming both", async () => {
    const above = Math.ceil(totalmem() * 2);
    const out = tempDir();
    const text = `limits: { memory: ${above} }\n${GOOD.replace('[prog, ', `[${JSON.stringify(process.execPath)}, "-e", "0", `)}`;
    const r = await cli(['run', experimentFile('mem.yaml', text), '--out', out]);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /limits\.memory: .*more than this machine's memory/);
    assert.ok(!existsSync(join(out, 't')), 'no run directory was made');
  });
});
