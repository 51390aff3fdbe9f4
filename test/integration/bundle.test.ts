// The portable bundle (npm run bundle): built once, unpacked into an empty folder and run there with
// a PATH that holds no Node.js (only prlimit, and SLURM's commands for the cluster test): --version,
// validate, a real max-batch run on the generated ONNX model, a SLURM run whose batch scripts
// start the bundled runtime, and the GPU proof kit's rehearsal (scripts/gpu-proof.sh --rehearse).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ROOT, tempDir } from '../support/paths.js';
import { requireSystem } from '../support/system.js';
import { startCluster } from '../support/slurm-cluster.js';

/** The environment of a fresh shell, without the npm_* variables of the npm that runs this suite. */
const SHELL_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const LIMIT = 64 * 2 ** 20;
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const platform = `linux-${process.arch}`;
const buildCommit = JSON.parse(readFileSync(join(ROOT, 'dist', 'build-info.json'), 'utf8')).commit as string | null;

/**
 * A max-batch run on a generated ONNX model that ends in seconds: a coarse multiple_of bounds the
 * bisection, and the confirmations (the quick e2e run's cost, tested there) are skipped.
 */
const MAX_BATCH = [
  'name: bundle-max-batch',
  'workload:',
  '  kind: onnx',
  '  model: { generate: mlp, input: 4096, hidden: 64, layers: 1 }',
  '  params: { intra_op_threads: 1, inter_op_threads: 1 }',
  'limits: { memory: 384MiB, timeout: 60s }',
  'measure: { warmup_steps: 1, steps: 2 }',
  'stages: [{ kind: max-batch, multiple_of: 2048, steps: 2, confirm_steps: 0, throughput_points: 1, repeat_boundary: 0 }]',
  '',
].join('\n');

/** What scripts/gpu-proof.sh calls: a shell and its tools, prlimit, and Debian's Python with torch. */
const KIT_PROGRAMS = [
  'bash',
  'cat',
  'cut',
  'date',
  'dirname',
  'find',
  'grep',
  'gzip',
  'head',
  'mkdir',
  'mktemp',
  'prlimit',
  'python3',
  'rm',
  'sed',
  'sleep',
  'stat',
  'tail',
  'tar',
  'tee',
  'timeout',
  'tr',
  'wc',
  'awk',
  'mawk',
  'gawk',
];

/** A folder for PATH holding links to these programs only (found where the system has them). */
function pathWith(programs: readonly string[]): string {
  const bin = tempDir('tunebench-bin-');
  for (const p of programs) {
    const at = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'].map((d) => join(d, p)).find(existsSync);
    if (at) symlinkSync(at, join(bin, p));
  }
  return bin;
}

describe('the portable bundle', { skip: requireSystem('xz') }, () => {
  let archive = '';
  let top = '';
  let build: { exitCode?: number | undefined; all?: string | undefined } = {};
  const home = tempDir('tunebench-bundle-home-');
  const env = (path: string) => ({ HOME: home, PATH: path, XDG_CACHE_HOME: join(home, 'cache'), LANG: 'C.UTF-8' });

  before(async () => {
    const out = tempDir('tunebench-bundle-out-');
    // `npm test` has just built dist/; the script packs it (npm run bundle builds first). --fast packs
    // the same files about 5 times faster into a larger archive, so the size limit holds a fortiori.
    build = await execa(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs'), '--out', out, '--fast'], {
      cwd: ROOT,
      env: SHELL_ENV,
      extendEnv: false,
      all: true,
      reject: false,
    });
    archive = join(out, `tunebench-${version}-${platform}.tar.xz`);
    const unpack = tempDir('tunebench-bundle-unpacked-');
    if (build.exitCode === 0) {
      const tar = await execa('tar', ['-xJf', archive, '-C', unpack], { reject: false, all: true });
      assert.equal(tar.exitCode, 0, tar.all);
    }
    top = join(unpack, `tunebench-${version}-${platform}`);
  });

  it('is one archive under 64 MiB with its sha256, the build, the runtime and this platform only', () => {
    assert.equal(build.exitCode, 0, build.all);
    assert.match(build.all ?? '', /MiB compressed \(limit 64\.0 MiB\)/);
    const bytes = readFileSync(archive);
    assert.ok(bytes.length < LIMIT, `${bytes.length} bytes`);
    const sha = readFileSync(`${archive}.sha256`, 'utf8');
    assert.equal(sha, `${createHash('sha256').update(bytes).digest('hex')}  tunebench-${version}-${platform}.tar.xz\n`);
    for (const f of [
      'tunebench',
      'node/bin/node',
      'dist/harness/cli/main.js',
      'harness/workloads/python/tunebench/__init__.py',
    ])
      assert.ok(existsSync(join(top, f)), f);
    assert.ok(existsSync(join(top, 'experiments', 'default.yaml')));
    const ort = join(top, 'node_modules', 'onnxruntime-node', 'bin');
    const napi = readdirSync(ort);
    assert.deepEqual(
      napi.flatMap((n) =>
        readdirSync(join(ort, n)).flatMap((os) => readdirSync(join(ort, n, os)).map((a) => `${os}/${a}`)),
      ),
      [`linux/${process.arch}`],
    );
    assert.ok(!existsSync(join(top, 'node_modules', 'typescript')), 'no development dependency');
  });

  it('runs where it is unpacked with no Node.js on PATH: --version, validate, a max-batch run and its report', async () => {
    const path = pathWith(['prlimit']);
    const tb = (args: string[]) =>
      execa(join(top, 'tunebench'), args, { cwd: top, env: env(path), extendEnv: false, all: true, reject: false });
    const which = await execa('/bin/sh', ['-c', 'command -v node || echo none'], { env: env(path), extendEnv: false });
    assert.equal(which.stdout.trim(), 'none');
    const v = await tb(['--version']);
    assert.equal(v.exitCode, 0, v.all);
    assert.equal(v.stdout.trim(), `${version} (commit ${buildCommit ? buildCommit.slice(0, 12) : 'unknown'})`);
    const valid = await tb(['validate', 'experiments/default.yaml']);
    assert.equal(valid.exitCode, 0, valid.all);
    const reports = tempDir('tunebench-bundle-reports-');
    const experiment = join(reports, 'bundle-max-batch.yaml');
    writeFileSync(experiment, MAX_BATCH);
    const run = await tb(['run', experiment, '--out', reports, '--quiet']);
    assert.equal(run.exitCode, 0, run.all);
    const [runId] = readdirSync(join(reports, 'bundle-max-batch'));
    const dir = join(reports, 'bundle-max-batch', runId!);
    const result = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).result;
    assert.ok(Number(result.chosen.batch_size) > 0, JSON.stringify(result.chosen));
    // The memory cap held the bundled runtime's trials: the search found a batch that does not fit.
    const outcomes = readFileSync(join(dir, 'trials.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).outcome);
    assert.ok(outcomes.includes('oom') && outcomes.includes('ok'), outcomes.join(' '));
    assert.ok(existsSync(join(dir, 'report.html')) && existsSync(join(dir, 'summary.md')));
    // The run's fingerprint names the bundled runtime: the only Node.js there is.
    const versions = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')).environment.versions;
    assert.equal(versions.node, process.versions.node, JSON.stringify(versions));
  });

  const onX64 = process.arch === 'x64' ? undefined : 'asks for linux-arm64 from an x64 machine';
  it('says what is missing for another platform instead of packing the wrong runtime', { skip: onX64 }, async () => {
    const arm = await execa(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs'), '--platform', 'linux-arm64'], {
      cwd: ROOT,
      reject: false,
    });
    assert.equal(arm.exitCode, 1);
    assert.match(arm.stderr, /is not a Node\.js binary for linux-arm64 .*give one with --node/);
    const mac = await execa(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs'), '--platform', 'darwin-arm64'], {
      cwd: ROOT,
      reject: false,
    });
    assert.match(mac.stderr, /expected one of linux-x64, linux-arm64/);
  });

  it(
    'runs SLURM array tasks on the bundled runtime: the batch scripts start its node',
    { skip: requireSystem('slurm') },
    async () => {
      // The cluster is this test's to start: it must not depend on the SLURM suite (or .ci/run) having run first.
      await startCluster();
      const path = pathWith(['prlimit', 'sbatch', 'squeue', 'scontrol', 'sacct', 'scancel', 'sinfo']);
      const work = tempDir('tunebench-bundle-slurm-');
      mkdirSync(join(work, 'reports'));
      const experiment = join(work, 'slurm-bundle.yaml');
      writeFileSync(
        experiment,
        [
          'name: bundle-slurm',
          'workload: { kind: command, command: [/bin/sleep, "0.{v}"] }',
          'limits: { timeout: 60s }',
          'executor: { kind: slurm, max_concurrent: 2, poll: 500ms }',
          'stages: [{ kind: sweep, params: { v: [1, 2] }, strategy: grid, repeats: 1 }]',
          '',
        ].join('\n'),
      );
      const r = await execa(join(top, 'tunebench'), ['run', experiment, '--out', join(work, 'reports'), '--quiet'], {
        cwd: work,
        env: env(path),
        extendEnv: false,
        all: true,
        reject: false,
      });
      assert.equal(r.exitCode, 0, r.all);
      const [runId] = readdirSync(join(work, 'reports', 'bundle-slurm'));
      const dir = join(work, 'reports', 'bundle-slurm', runId!);
      const script = readFileSync(join(dir, 'slurm', 'trial.sh'), 'utf8');
      assert.ok(
        script.includes(`'${join(top, 'node', 'bin', 'node')}' '${join(top, 'dist', 'harness', 'cli', 'main.js')}'`),
        script,
      );
      const trials = readFileSync(join(dir, 'trials.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(trials.length, 2);
      assert.ok(
        trials.every((t) => t.outcome === 'ok' && t.node?.slurm_job),
        JSON.stringify(trials.map((t) => t.reason)),
      );
    },
  );

  it(
    'rehearses the GPU proof kit with no Node.js on PATH: five steps, each ok or skipped with its reason, within the limits of what comes back',
    { skip: requireSystem('torch') },
    async () => {
      const path = pathWith(KIT_PROGRAMS);
      const out = tempDir('tunebench-gpu-proof-');
      const r = await execa(
        'bash',
        [join(top, 'scripts', 'gpu-proof.sh'), '--rehearse', '--out', out, '--archive', archive],
        { cwd: tempDir('tunebench-gpu-proof-cwd-'), env: env(path), extendEnv: false, all: true, reject: false },
      );
      assert.equal(r.exitCode, 0, r.all);
      // What comes back from a lent machine: at most 8 files of at most 16 MiB.
      const files = readdirSync(out).sort();
      assert.deepEqual(files, ['finders.jsonl', 'fixtures.tar.gz', 'log.txt', 'runs.tar.gz', 'summary.md']);
      assert.match(r.all ?? '', /the bundle that travels is \d+ MiB/);
      const rows = readFileSync(join(out, 'summary.md'), 'utf8')
        .trim()
        .split('\n')
        .slice(2)
        .map((l) => l.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '')));
      assert.deepEqual(
        rows.map(([name, status]) => `${name} ${status}`),
        ['fixtures ok', 'max-batch ok', 'finders skipped', 'allocator ok', 'loader ok', 'claims ok'],
        r.all,
      );
      // Columns: step, status, seconds, budget, detail.
      const detail = Object.fromEntries(rows.map(([name, , , , d]) => [name, d ?? '']));
      // The recorded nvidia-smi output stands in for the card; the OOM is the CPU allocator's under a cap.
      assert.match(detail['fixtures'], /^NVIDIA A100-SXM4-80GB, [\d.]+, 81920; OOM exit status [1-9]/);
      assert.match(
        detail['max-batch'],
        /^max \d+ in \d+ s \(setup [\d.]+ s, build [\d.]+ s, .*in-process attempts\); direct: \d+ (ran|FAILED) 10 steps/,
      );
      assert.match(
        detail['finders'],
        /lightning: Lightning is not importable here.*accelerate: Accelerate is not importable here/,
      );
      assert.match(
        detail['allocator'],
        // Each compare's first note, as its typed fields (run.json format 3).
        /^empty-cache: \{"empty_cache": "[a-z0-9-]+"\} \(\{"kind":"[a-z-]+",.*\); alloc-conf: \{"alloc_conf": .*\} \(\{"kind":"[a-z-]+",/,
      );
      assert.match(detail['claims'], /5-10% faster empty_cache every-step → never .*; 2x precision fp32 → bf16/);
      const listing = await execa('tar', ['-tzf', join(out, 'fixtures.tar.gz')]);
      for (const f of [
        'info.csv',
        'samples-idle.csv',
        'samples-load.csv',
        'versions.json',
        'torch.json',
        'oom.json',
        'oom-stderr.txt',
      ])
        assert.ok(listing.stdout.split('\n').includes(`fixtures/${f}`), listing.stdout);
      const runs = (await execa('tar', ['-tzf', join(out, 'runs.tar.gz')])).stdout.split('\n');
      for (const run of ['max-batch', 'allocator', 'loader', 'claim-empty-cache'])
        for (const f of ['summary.md', 'trials.jsonl'])
          assert.ok(
            runs.some((p) => p.startsWith(`./${run}/`) && p.endsWith(`/${f}`)),
            `${run}/${f} in ${runs.join(' ')}`,
          );
    },
  );

  it('refuses to return more than a lent machine gives back: 8 files, 16 MiB each, 2 folders down', async () => {
    const dir = tempDir('tunebench-gpu-proof-limits-');
    const kit = (d: string) =>
      execa('bash', [join(top, 'scripts', 'gpu-proof.sh'), '--check', d], { all: true, reject: false });
    for (let i = 0; i < 8; i++) writeFileSync(join(dir, `f${i}`), 'x');
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    assert.equal((await kit(dir)).exitCode, 0);
    writeFileSync(join(dir, 'a', 'b', 'ninth'), 'x');
    assert.match((await kit(dir)).all ?? '', /9 files in .*, more than the 8 that come back/);
    const big = tempDir('tunebench-gpu-proof-limits-');
    writeFileSync(join(big, 'big'), Buffer.alloc(16 * 2 ** 20 + 1));
    mkdirSync(join(big, 'a', 'b', 'c'), { recursive: true });
    writeFileSync(join(big, 'a', 'b', 'c', 'deep'), 'x');
    const r = await kit(big);
    assert.equal(r.exitCode, 1);
    assert.match(r.all ?? '', /big is 16 MiB, over the 16 MiB/);
    assert.match(r.all ?? '', /more than 2 folders down/);
  });
});
