// History, baselines, resumes and printed commands turned against their owner (issue 31): a tampered
// history cache, forged confirmations, concurrent gates, a deleted journal, another experiment's run,
// hostile output paths, a group signal to the nightly script, and read-only or wrong output folders.
// Each gets a clear message and the documented exit code, and nothing is read or written outside the tree.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { procStart } from '../../harness/store/lock.js';
import { readRunEntry } from '../../harness/history/index.js';
import { commandExperiment, FAULTS_EXPERIMENT } from '../support/faults.js';
import { plantedNights, writeNights } from '../support/history.js';
import { CLI, PROGRAMS, ROOT, tempDir } from '../support/paths.js';
import { REPORT_FIXTURE } from '../support/runs.js';
import { requireSystem } from '../support/system.js';
import { waitFor } from '../support/wait.js';

const cli = (args: string[], cwd?: string) =>
  execa(process.execPath, [CLI, ...args], { reject: false, ...(cwd ? { cwd } : {}) });

const readJson = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as T;

interface GateJson {
  experiments: { gate: { latest: { dir: string }; failing: string[] } }[];
}

/** A quick command experiment (4 trials of a program that ignores the protocol) in dir. */
function quickExperiment(dir: string, name: string): string {
  return commandExperiment(
    dir,
    name,
    [process.execPath, join(PROGRAMS, 'no-events.mjs')],
    [],
    ['stages:', '  - kind: sweep', '    params: { x: [1, 2] }', '    strategy: grid', '    repeats: 2'],
  );
}

const mounts: string[] = [];
after(async () => {
  for (const m of mounts) await execa('umount', [m], { reject: false });
});

describe('history, baselines and resumes that cannot be turned against their owner', { timeout: 5 * 60_000 }, () => {
  it('a tampered .history-index.json pointing a run at a foreign folder: the dir is re-derived, with a warning', async () => {
    const reports = tempDir();
    const dirs = writeNights(reports, plantedNights(3, { at: 99, step: 1, noise: 0.01, seed: 3 }));
    assert.equal((await cli(['history', reports, '--json'])).exitCode, 0);
    const foreign = join(tempDir(), 'foreign');
    cpSync(dirs.at(-1)!, foreign, { recursive: true });
    const cachePath = join(reports, '.history-index.json');
    const cache = readJson<{ entries: Record<string, { entry: { dir: string } }> }>(cachePath);
    cache.entries[dirs.at(-1)!]!.entry.dir = foreign;
    writeFileSync(cachePath, JSON.stringify(cache));
    const r = await cli(['history', reports, '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as GateJson).experiments[0]!.gate.latest.dir, dirs.at(-1));
    assert.match(r.stderr, /\.history-index\.json: the cached entry of .*night-0003 names .*foreign.*ignored/);
    assert.deepEqual(readdirSync(foreign).sort(), ['run.json', 'trials.jsonl']);
    // A run folder whose run.json links to a run outside the tree is skipped, not read.
    const planted = join(reports, 'report-fixture', 'night-9999');
    mkdirSync(planted);
    symlinkSync(join(foreign, 'run.json'), join(planted, 'run.json'));
    const linked = await cli(['history', reports, '--json']);
    assert.equal(linked.exitCode, 0, linked.stderr);
    const summary = JSON.parse(linked.stdout) as GateJson & { skipped: { dir: string; why: string }[] };
    assert.equal(summary.experiments[0]!.gate.latest.dir, dirs.at(-1));
    assert.match(summary.skipped.find((x) => x.dir === planted)?.why ?? '', /not a regular file/);
  });

  it("history takes a run's figures from its journal: a run.json whose CI was edited x50 moves nothing (issue 45)", async () => {
    const reports = tempDir();
    const r = await cli(['run', quickExperiment(tempDir(), 'edited'), '--out', reports, '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    const dir = (JSON.parse(r.stdout) as { run_dir: string }).run_dir;
    const honest = await readRunEntry(dir);
    assert.ok(!('why' in honest), JSON.stringify(honest));
    const runFile = join(dir, 'run.json');
    const run = readJson<{
      result: { stages: { result: { configs: { throughput: Record<string, number> | null }[] } }[] };
    }>(runFile);
    for (const c of run.result.stages[0]!.result.configs)
      if (c.throughput) for (const k of ['estimate', 'low', 'high']) c.throughput[k] = c.throughput[k]! * 50;
    writeFileSync(runFile, JSON.stringify(run));
    const edited = await readRunEntry(dir);
    assert.ok(!('why' in edited), JSON.stringify(edited));
    assert.deepEqual(edited.metrics, honest.metrics, "the figures are the journal's");
    assert.match(edited.warning ?? '', /run\.json disagrees with trials\.jsonl on stages/);
  });

  it('a forged confirmations.json (value 1e300, trials -3, run_dir /etc) is refused, naming the file and field', async () => {
    const reports = tempDir();
    writeNights(reports, plantedNights(24, { at: 20, step: 0.88, noise: 0.02, seed: 7 }));
    const args = ['history', reports, '--fail-on-regression', '5', '--no-confirm', '--json'];
    const flagged = await cli(args);
    assert.equal(flagged.exitCode, 3, flagged.stderr);
    const failing = (JSON.parse(flagged.stdout) as GateJson).experiments[0]!.gate.failing;
    const forged = failing.map((metric) => ({
      run_id: 'night-0024',
      metric,
      at: '2026-10-25T00:00:00Z',
      value: 1e300,
      trials: -3,
      reference_run: 'night-0020',
      same_config: true,
      config_ratio: null,
      run_dir: '/etc',
      error: null,
    }));
    writeFileSync(join(reports, 'report-fixture', 'confirmations.json'), JSON.stringify({ confirmations: forged }));
    const r = await cli(args);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /confirmations\.json/);
    assert.match(r.stderr, /confirmations\[0\]\.(value|trials|run_dir)/);
  });

  it('two concurrent history --fail-on-regression: the second is refused, naming the holder of the lock', async () => {
    const reports = tempDir();
    writeNights(reports, plantedNights(3, { at: 99, step: 1, noise: 0.01, seed: 3 }));
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      const info = {
        pid: holder.pid,
        host: hostname(),
        proc_start: procStart(holder.pid!),
        acquired_at: new Date().toISOString(),
        command: 'tunebench history reports --fail-on-regression 5',
      };
      writeFileSync(join(reports, '.history.lock'), JSON.stringify(info));
      const r = await cli(['history', reports, '--fail-on-regression', '5']);
      assert.equal(r.exitCode, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`in use by another tunebench \\(pid ${holder.pid} on `));
      assert.match(r.stderr, /tunebench history reports --fail-on-regression 5/);
      assert.ok(!existsSync(join(reports, 'history')));
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('baseline clear on a folder with no baseline says so and exits 2', async () => {
    const missing = await cli(['baseline', 'clear', join(tempDir(), 'no-such-experiment')]);
    assert.equal(missing.exitCode, 2, missing.stderr);
    assert.match(missing.stderr, /no-such-experiment is not a folder/);
    assert.doesNotMatch(missing.stdout, /removed/);
    const empty = await cli(['baseline', 'clear', tempDir()]);
    assert.equal(empty.exitCode, 2, empty.stderr);
    assert.match(empty.stderr, /no pinned baseline in .*: nothing to clear/);
  });

  it('a stopped run whose journal was deleted is refused on resume, naming the missing file', async () => {
    const dir = tempDir();
    const r = await cli(['run', quickExperiment(dir, 'quick'), '--out', join(dir, 'reports'), '--quiet', '--json']);
    assert.equal(r.exitCode, 0, r.stderr);
    const runDir = (JSON.parse(r.stdout) as { run_dir: string }).run_dir;
    const run = readJson<Record<string, unknown>>(join(runDir, 'run.json'));
    run['status'] = 'stopped';
    run['stopped'] = { reason: 'stopped by SIGTERM', stage: 'sweep', stage_trials: 4, completed_trials: 4, resume: '' };
    delete run['finished_at'];
    writeFileSync(join(runDir, 'run.json'), JSON.stringify(run));
    rmSync(join(runDir, 'trials.jsonl'));
    const resumed = await cli(['run', '--resume', runDir, '--quiet']);
    assert.equal(resumed.exitCode, 2, resumed.stderr);
    assert.match(resumed.stderr, /trials\.jsonl is missing, but .* 4 completed trial/);
    assert.ok(!existsSync(join(runDir, 'trials.jsonl')));
  });

  it('a printed resume command survives a newline, quotes and $ in --out when pasted into a shell', async () => {
    const dir = tempDir();
    const out = join(dir, "a\nb $HOME 'q'");
    const experiment = commandExperiment(
      dir,
      'hang',
      [process.execPath, join(PROGRAMS, 'hangs.mjs')],
      [],
      [
        'limits: { timeout: 60s }',
        'stages:',
        '  - kind: sweep',
        '    params: { x: [1] }',
        '    strategy: grid',
        '    repeats: 1',
      ],
    );
    const child = execa(process.execPath, [CLI, 'run', experiment, '--out', out, '--quiet'], { reject: false });
    const runDir = await waitFor('the run under way', () => {
      const exp = join(out, 'hang');
      const id = existsSync(exp) ? readdirSync(exp)[0] : undefined;
      return id && existsSync(join(exp, id, '.scratch')) ? join(exp, id) : null;
    });
    await new Promise((r) => setTimeout(r, 1000));
    child.kill('SIGTERM');
    const r = await child;
    assert.equal(r.exitCode, 130, r.stderr);
    const stop = readJson<{ stopped: { resume: string } }>(join(runDir, 'run.json')).stopped;
    assert.ok(!stop.resume.includes('\n'), stop.resume);
    assert.deepEqual(bashWords(stop.resume), ['tunebench', 'run', '--resume', runDir]);
    const printed = /Resume with: (.*)$/m.exec(r.stderr)?.[1] ?? '';
    assert.deepEqual(bashWords(printed), ['tunebench', 'run', '--resume', runDir]);
  });

  it('run --resume-unfinished never resumes the unfinished run of another experiment file with the same name', async () => {
    const dir = tempDir();
    const reports = join(dir, 'reports');
    const first = quickExperiment(dir, 'base');
    const other = join(dir, 'other');
    mkdirSync(other);
    const second = quickExperiment(other, 'base');
    const a = await cli(['run', first, '--out', reports, '--quiet', '--json']);
    assert.equal(a.exitCode, 0, a.stderr);
    const aDir = (JSON.parse(a.stdout) as { run_dir: string }).run_dir;
    const run = readJson<Record<string, unknown>>(join(aDir, 'run.json'));
    run['status'] = 'stopped';
    writeFileSync(join(aDir, 'run.json'), JSON.stringify(run));
    const b = await cli(['run', second, '--out', reports, '--resume-unfinished', '--quiet', '--json']);
    assert.equal(b.exitCode, 0, b.stderr);
    assert.notEqual((JSON.parse(b.stdout) as { run_dir: string }).run_dir, aDir);
    assert.equal(readJson<{ resumes: unknown[] }>(join(aDir, 'run.json')).resumes.length, 0);
    assert.equal(readdirSync(join(reports, 'base')).length, 2);
  });

  it('one group SIGTERM to nightly.sh reaches tunebench once: partial report, exit 130, no <run-dir> placeholder', async () => {
    const reports = tempDir();
    const script = join(ROOT, 'experiments', 'nightly', 'nightly.sh');
    const child = spawn(script, [], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, EXPERIMENT: FAULTS_EXPERIMENT, REPORTS: reports, THRESHOLD: '10' },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const runs = join(reports, 'faults');
    const id = await waitFor('the night under way', () => {
      const first = existsSync(runs) ? readdirSync(runs)[0] : undefined;
      const journal = first ? join(runs, first, 'trials.jsonl') : '';
      return first && existsSync(journal) && readFileSync(journal, 'utf8').split('\n').length > 3 ? first : null;
    });
    // tunebench runs in a process group of its own: a signal to the script's group reaches only the script.
    const runner = childrenOf(child.pid!).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('run'));
    assert.ok(runner, 'tunebench run is a child of nightly.sh');
    assert.notEqual(processGroupOf(runner), child.pid);
    process.kill(-child.pid!, 'SIGTERM');
    assert.equal(await done, 130, stderr);
    assert.doesNotMatch(stderr, /second SIGTERM|<run-dir>/);
    assert.equal(readJson<{ status: string }>(join(runs, id, 'run.json')).status, 'stopped');
    assert.ok(existsSync(join(runs, id, 'report.html')));
  });

  it('compare warns about an unfinished run, and --out naming a file is refused with exit 2', async () => {
    const dir = tempDir();
    const before = join(dir, 'before');
    const after = join(dir, 'after');
    cpSync(REPORT_FIXTURE, before, { recursive: true });
    cpSync(REPORT_FIXTURE, after, { recursive: true });
    const run = readJson<Record<string, unknown>>(join(after, 'run.json'));
    run['status'] = 'stopped';
    run['stopped'] = { reason: 'stopped by SIGTERM', stage: 'sweep', stage_trials: 1, completed_trials: 3, resume: '' };
    writeFileSync(join(after, 'run.json'), JSON.stringify(run));
    const warned = await cli(['compare', before, after, '--out', join(dir, 'cmp')]);
    assert.equal(warned.exitCode, 0, warned.stderr);
    assert.match(warned.stderr, /warning: the after run .* did not finish \(status stopped\)/);
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const r = await cli(['compare', before, before, '--out', file]);
    assert.equal(r.exitCode, 2, r.stderr);
    assert.match(r.stderr, /--out .*a-file is a file, not a folder/);
    assert.doesNotMatch(r.stderr, /ENOTDIR/);
  });

  it('history and report on a read-only folder: a clear message with a flag that exists', async (t) => {
    const skip = requireSystem('tmpfs');
    if (skip) return t.skip(String(skip));
    const ro = tempDir('tunebench-mnt-');
    await execa('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', ro]);
    mounts.push(ro);
    writeNights(ro, plantedNights(3, { at: 99, step: 1, noise: 0.01, seed: 3 }));
    cpSync(REPORT_FIXTURE, join(ro, 'one'), { recursive: true });
    await execa('mount', ['-o', 'remount,ro', ro]);
    const h = await cli(['history', ro]);
    assert.equal(h.exitCode, 1, h.stderr);
    assert.match(h.stderr, /read-only \(EROFS\); pass --out <dir> somewhere writable/);
    assert.doesNotMatch(h.stderr, /^Error|at .*\.js:\d+/m);
    const rep = await cli(['report', join(ro, 'one')]);
    assert.equal(rep.exitCode, 1, rep.stderr);
    assert.match(rep.stderr, /pass --out <dir>/);
    const help = await cli(['report', '--help']);
    assert.match(help.stdout, /--out <dir>/);
    const elsewhere = tempDir();
    const moved = await cli(['report', join(ro, 'one'), '--out', elsewhere]);
    assert.equal(moved.exitCode, 0, moved.stderr);
    assert.ok(existsSync(join(elsewhere, 'report.html')));
  });
});

/** How bash splits a printed command line (what a user gets when pasting it). */
function bashWords(line: string): string[] {
  const script = `for a in ${line}; do printf '%s\\0' "$a"; done`;
  return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).split('\0').slice(0, -1);
}

function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** Field 5 of /proc/<pid>/stat, counted after the command name (which may hold spaces). */
function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}
