// The package as people install it: `npm pack`, the tarball installed into an empty folder, and the
// `tunebench` binary run there (the build, the Python adapter and the shipped experiments travel along).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ROOT, tempDir } from '../support/paths.js';

/** The commit of this checkout, or null outside git. */
function headCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

/**
 * The environment of a fresh shell: without the npm_* variables of the npm or npx that runs this
 * suite (under `npx -p node@24 -- npm test`, npm_config_package would make the inner npx fetch node).
 */
const SHELL_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const inShell = { env: SHELL_ENV, extendEnv: false, all: true, reject: false } as const;

describe('the packed package', () => {
  it('installs from its tarball into an empty folder and runs: --version names the commit, validate works', async () => {
    const packDir = tempDir();
    // `npm test` has just built dist/, so the pack skips `prepare` rather than build again.
    const pack = await execa('npm', ['pack', '--ignore-scripts', '--pack-destination', packDir], {
      cwd: ROOT,
      ...inShell,
    });
    assert.equal(pack.exitCode, 0, pack.all);
    const tarball = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, `npm pack wrote a tarball: ${pack.all}`);

    const app = tempDir();
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    // As in this repository: onnxruntime-node runs on CPU without its install script (which downloads
    // CUDA binaries); the machines that run the suite reach only the npm registry.
    copyFileSync(join(ROOT, '.npmrc'), join(app, '.npmrc'));
    const install = await execa(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', join(packDir, tarball)],
      { cwd: app, ...inShell },
    );
    assert.equal(install.exitCode, 0, install.all);
    const installed = join(app, 'node_modules', 'tunebench');
    for (const f of [
      'dist/harness/cli/main.js',
      'harness/workloads/python/tunebench/__init__.py',
      'experiments/default.yaml',
    ]) {
      assert.ok(existsSync(join(installed, f)), `the package holds ${f}`);
    }

    const version = await execa('npx', ['--no-install', 'tunebench', '--version'], { cwd: app, ...inShell });
    assert.equal(version.exitCode, 0, version.all);
    const commit = headCommit();
    assert.match(version.stdout, /^\d+\.\d+\.\d+ \(commit ([0-9a-f]{12}|unknown)\)$/);
    // The installed package has no .git: the commit comes from dist/build-info.json, written by the build
    // ("unknown" where the build found no git: a checkout without git installed, or no checkout).
    assert.ok(version.stdout.endsWith(`(commit ${commit ? commit.slice(0, 12) : 'unknown'})`), version.stdout);

    const validate = await execa(
      'npx',
      ['--no-install', 'tunebench', 'validate', join(installed, 'experiments', 'default.yaml')],
      { cwd: app, ...inShell },
    );
    assert.equal(validate.exitCode, 0, validate.all);
    assert.match(validate.stdout, /valid \(\d+ stages?: /);
  });
});
