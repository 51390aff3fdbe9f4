// The Python adapter as people install it: one package (tunebench: the adapter, its warm server and the
// PEP 561 py.typed marker), installed with pip into a virtualenv, offline, from the checkout; both modules
// import from the virtualenv, and a type checker uses the adapter's annotations there.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ROOT, tempDir } from '../../support/paths.js';
import { MYPY, PYTHON, requireSystem } from '../../support/system.js';

const ADAPTER = join(ROOT, 'harness', 'workloads', 'python');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** Nothing of the caller's environment: no PYTHONPATH that could find the checkout's copy instead. */
const CLEAN_ENV = { PATH: '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8' };

/** A virtualenv with the adapter installed in it by pip (made once, for the tests below). */
let installed: Promise<{ python: string; pipLog: string }> | undefined;
function installAdapter(): Promise<{ python: string; pipLog: string }> {
  installed ??= (async () => {
    const venv = join(tempDir('tunebench-venv-'), 'venv');
    // pip and setuptools come from the system's site-packages: nothing is downloaded.
    await execa(PYTHON, ['-m', 'venv', '--without-pip', '--system-site-packages', venv]);
    const python = join(venv, 'bin', 'python');
    const pip = await execa(
      python,
      [
        '-m',
        'pip',
        'install',
        '--no-build-isolation',
        '--no-deps',
        '--no-index',
        '--disable-pip-version-check',
        ADAPTER,
      ],
      { reject: false, all: true, env: CLEAN_ENV, extendEnv: false },
    );
    assert.equal(pip.exitCode, 0, pip.all);
    return { python, pipLog: pip.all ?? '' };
  })();
  return installed;
}

describe('the Python adapter installed with pip into a virtualenv', () => {
  it(
    'imports both modules from the virtualenv, with its version and py.typed, and leaves the checkout clean',
    { skip: requireSystem('pip'), timeout: 180_000 },
    async () => {
      const { python } = await installAdapter();
      const litter = readdirSync(ADAPTER).filter((name) => name === 'build' || name.endsWith('.egg-info'));
      assert.deepEqual(litter, [], 'setuptools output left in harness/workloads/python');
      assert.ok(!existsSync(join(ADAPTER, 'build_backend', 'build')));
      const probe = [
        'import importlib.metadata, pathlib, sys, tunebench, tunebench.warm',
        'print(sys.prefix)',
        'print(tunebench.__file__)',
        'print(tunebench.warm.__file__)',
        'print(importlib.metadata.version("tunebench"))',
        'print((pathlib.Path(tunebench.__file__).parent / "py.typed").is_file())',
        'print(tunebench.count_samples([1, 2, 3]), callable(tunebench.warm.serve))',
      ].join('\n');
      const r = await execa(python, ['-c', probe], {
        cwd: tempDir(),
        env: CLEAN_ENV,
        extendEnv: false,
        reject: false,
        all: true,
      });
      assert.equal(r.exitCode, 0, r.all);
      const [prefix, adapter, warm, version, typed, calls] = r.stdout.trim().split('\n');
      const sitePackages = new RegExp(`^${prefix}/lib/python3[.\\d]*/site-packages/tunebench/`);
      assert.match(adapter!, new RegExp(`${sitePackages.source}__init__\\.py$`));
      assert.match(warm!, new RegExp(`${sitePackages.source}warm\\.py$`));
      assert.equal(version, VERSION);
      assert.equal(typed, 'True');
      assert.equal(calls, '3 True');
    },
  );

  it(
    "is typed where it is installed: mypy checks a script against the adapter's annotations",
    { skip: requireSystem('pip') ?? requireSystem('mypy'), timeout: 300_000 },
    async () => {
      const { python } = await installAdapter();
      const dir = tempDir();
      const script = join(dir, 'train.py');
      writeFileSync(
        script,
        'import tunebench\n\nn: int = tunebench.count_samples([1, 2])\nwrong: str = tunebench.count_samples([1])\n',
      );
      const r = await execa(
        MYPY,
        ['--strict', '--no-incremental', '--cache-dir', join(dir, 'cache'), '--python-executable', python, script],
        { cwd: dir, env: CLEAN_ENV, extendEnv: false, reject: false, all: true },
      );
      // Without py.typed mypy would say the module is "missing library stubs or py.typed marker" and check
      // nothing; with it, the one wrong line is found on its line, and only it.
      assert.doesNotMatch(r.all ?? '', /py\.typed marker|import-untyped|import-not-found/);
      assert.match(
        r.stdout,
        /train\.py:4: error: Incompatible types in assignment \(expression has type "int", variable has type "str"\)/,
      );
      assert.match(r.stdout, /Found 1 error in 1 file/);
    },
  );
});
