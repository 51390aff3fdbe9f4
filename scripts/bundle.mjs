// `npm run bundle`: one self-contained archive for machines without Node.js or a network (GPU nodes,
// air-gapped clusters): tunebench-<version>-<platform>.tar.xz and its .sha256, holding a Node.js
// runtime, the build, the Python adapter, the shipped experiments and the production dependencies
// pruned to the target platform, with a `tunebench` launcher at its root.
//
//   node scripts/bundle.mjs [--platform linux-x64|linux-arm64] [--node <node binary>] [--out <dir>] [--fast]
//
// The build (dist/) must exist: `npm run bundle` builds first.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The archive must fit this (the issue's limit; a trial packing came to about 42 MB). */
export const MAX_BUNDLE_BYTES = 64 * 2 ** 20;
const PLATFORMS = { 'linux-x64': { elf: 0x3e, ort: 'x64' }, 'linux-arm64': { elf: 0xb7, ort: 'arm64' } };
/** xz presets: the default packs smallest; --fast packs about 5 times faster into an archive about a fifth larger. */
const XZ_PRESET = { default: '-6', fast: '-1' };

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function fail(message) {
  process.stderr.write(`bundle: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const o = { platform: `linux-${process.arch}`, node: undefined, out: root, fast: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => inline ?? argv[++i] ?? fail(`${flag} needs a value`);
    if (flag === '--platform') o.platform = value();
    else if (flag === '--node') o.node = value();
    else if (flag === '--out') o.out = value();
    else if (flag === '--fast' && inline === undefined) o.fast = true;
    else
      fail(
        `unknown argument ${JSON.stringify(argv[i])}; usage: npm run bundle -- [--platform linux-x64|linux-arm64] [--node <node binary>] [--out <dir>] [--fast]`,
      );
  }
  if (!(o.platform in PLATFORMS))
    fail(
      `--platform ${o.platform}: expected one of ${Object.keys(PLATFORMS).join(', ')} (tunebench runs trials on Linux only)`,
    );
  return o;
}

/** The ELF machine of a binary (0x3e x86-64, 0xb7 aarch64), or null when it is not ELF. */
function elfMachine(path) {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(20);
    readSync(fd, b, 0, 20, 0);
    if (b.readUInt32BE(0) !== 0x7f454c46) return null;
    return b.readUInt16LE(18);
  } finally {
    closeSync(fd);
  }
}

function nodeBinary(o) {
  const want = PLATFORMS[o.platform].elf;
  const path = o.node ?? process.execPath;
  if (!existsSync(path)) fail(`--node ${path}: no such file`);
  const machine = elfMachine(path);
  if (machine !== want) {
    fail(
      `${path} is not a Node.js binary for ${o.platform} (ELF machine ${machine === null ? 'none' : `0x${machine.toString(16)}`}); ` +
        `give one with --node: the bin/node of nodejs.org's node-v${process.versions.node}-${o.platform}.tar.xz`,
    );
  }
  if (o.node) {
    const v = spawnSync(path, ['--version'], { encoding: 'utf8' });
    // A binary for another processor cannot run here: its version is taken on trust.
    if (v.status === 0 && !/^v(2[0-9]|[3-9][0-9])\./.test(v.stdout.trim()))
      fail(`${path} is Node.js ${v.stdout.trim()}; tunebench needs >= 20.19`);
  }
  return path;
}

/** The version of a Node.js binary: asked where it runs here, else unknown (another processor's). */
function nodeVersion(path) {
  if (path === process.execPath) return process.versions.node;
  const v = spawnSync(path, ['--version'], { encoding: 'utf8' });
  return v.status === 0 ? v.stdout.trim().replace(/^v/, '') : 'unknown';
}

/** The production dependencies' folders (npm's own resolution), relative to the project. */
function productionPackages() {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && l !== root)
    .map((l) => relative(root, l))
    .filter((l) => l.startsWith('node_modules'));
}

/**
 * Copies the production packages, leaving out the files no run needs: type declarations, source maps,
 * @types, and ONNX Runtime for other platforms (about 250 MiB that are never copied rather than
 * copied and removed). Returns the bytes left out.
 */
function copyPackages(packages, top, platform) {
  const want = PLATFORMS[platform].ort;
  const ortBin = join(root, 'node_modules', 'onnxruntime-node', 'bin');
  let removed = 0;
  const needed = (src) => {
    const st = lstatSync(src);
    let skip;
    if (st.isDirectory()) {
      const at = relative(ortBin, src).split(sep);
      const parts = src.split(sep);
      const types = parts.lastIndexOf('@types');
      skip =
        // a package of the @types scope (type declarations only), or that scope folder
        (types > 0 && parts[types - 1] === 'node_modules') ||
        // bin/<napi>/<os>/<arch> of onnxruntime-node for another system or processor
        (at.length === 3 && at[0] !== '..' && !(at[1] === 'linux' && at[2] === want));
      if (skip) removed += size(src);
    } else {
      skip = /\.(d\.[cm]?ts|map)$/.test(basename(src));
      if (skip) removed += st.size;
    }
    return !skip;
  };
  // A package's folder holds its nested node_modules: one copy of the outermost folder takes them along.
  const outermost = packages.filter((p) => !packages.some((q) => p.startsWith(`${q}${sep}`)));
  for (const p of outermost)
    cpSync(join(root, p), join(top, p), { recursive: true, dereference: false, filter: needed });
  const kept = join(top, relative(root, ortBin));
  const found = existsSync(kept) && readdirSync(kept).some((napi) => existsSync(join(kept, napi, 'linux', want)));
  if (!found)
    fail(`onnxruntime-node has no binaries for ${platform} here (node_modules/onnxruntime-node/bin/*/linux/${want})`);
  return removed;
}

function size(p) {
  const s = statSync(p);
  if (!s.isDirectory()) return s.size;
  return readdirSync(p).reduce((n, e) => n + size(join(p, e)), 0);
}

const LAUNCHER = `#!/bin/sh
# tunebench, bundled: runs the bundled Node.js on the bundled build, so the machine needs no Node.js.
# Link it into a folder on PATH or call it by its path; it finds its folder either way.
self=$0
case $self in */*) ;; *) self=$(command -v -- "$self") ;; esac
if command -v readlink >/dev/null 2>&1; then self=$(readlink -f -- "$self"); fi
here=\${self%/*}
exec "$here/node/bin/node" --max-semi-space-size=1 "$here/dist/harness/cli/main.js" "$@"
`;

function main() {
  const o = parseArgs(process.argv.slice(2));
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  if (!existsSync(join(root, 'dist', 'harness', 'cli', 'main.js'))) fail('no build in dist/: run npm run build first');
  const node = nodeBinary(o);
  const name = `tunebench-${pkg.version}-${o.platform}`;
  const stage = mkdtempSync(join(tmpdir(), 'tunebench-bundle-'));
  try {
    const top = join(stage, name);
    mkdirSync(join(top, 'node', 'bin'), { recursive: true });
    copyFileSync(node, join(top, 'node', 'bin', 'node'));
    chmodSync(join(top, 'node', 'bin', 'node'), 0o755);
    // Node.js's licence travels with its binary where the installation has it.
    for (const lic of [join(dirname(node), '..', 'share', 'doc', 'node', 'LICENSE'), '/usr/share/doc/nodejs/copyright'])
      if (existsSync(lic)) {
        copyFileSync(lic, join(top, 'node', 'LICENSE'));
        break;
      }
    cpSync(join(root, 'dist', 'harness'), join(top, 'dist', 'harness'), { recursive: true });
    copyFileSync(join(root, 'dist', 'build-info.json'), join(top, 'dist', 'build-info.json'));
    for (const f of ['tunebench', 'pyproject.toml', 'build_backend'])
      cpSync(join(root, 'harness', 'workloads', 'python', f), join(top, 'harness', 'workloads', 'python', f), {
        recursive: true,
        filter: (src) => !src.includes('__pycache__'),
      });
    cpSync(join(root, 'experiments'), join(top, 'experiments'), { recursive: true });
    // The GPU proof kit (scripts/gpu-proof.sh) and, for its rehearsal, the recorded nvidia-smi output.
    mkdirSync(join(top, 'scripts'), { recursive: true });
    copyFileSync(join(root, 'scripts', 'gpu-proof.sh'), join(top, 'scripts', 'gpu-proof.sh'));
    chmodSync(join(top, 'scripts', 'gpu-proof.sh'), 0o755);
    cpSync(join(root, 'gpu-proof'), join(top, 'gpu-proof'), {
      recursive: true,
      filter: (src) => !src.includes('__pycache__'),
    });
    cpSync(join(root, 'test', 'fixtures', 'bin', 'nvidia-smi'), join(top, 'gpu-proof', 'rehearsal', 'bin', 'nvidia-smi'));
    cpSync(join(root, 'test', 'fixtures', 'nvidia-smi'), join(top, 'gpu-proof', 'rehearsal', 'nvidia-smi'), {
      recursive: true,
    });
    for (const f of ['README.md', 'LICENSE']) if (existsSync(join(root, f))) copyFileSync(join(root, f), join(top, f));
    // type: module (dist/ is ESM), the version, and the dependencies for the record.
    const { name: pkgName, version, type, license, dependencies } = pkg;
    writeFileSync(
      join(top, 'package.json'),
      `${JSON.stringify({ name: pkgName, version, type, license, dependencies, bundled: { platform: o.platform, node: nodeVersion(node) } }, null, 2)}\n`,
    );
    const packages = productionPackages();
    const pruned = copyPackages(packages, top, o.platform);
    writeFileSync(join(top, 'tunebench'), LAUNCHER);
    chmodSync(join(top, 'tunebench'), 0o755);
    const unpacked = size(top);

    mkdirSync(o.out, { recursive: true });
    const archive = join(o.out, `${name}.tar.xz`);
    const xz = `xz -T0 ${XZ_PRESET[o.fast ? 'fast' : 'default']}`;
    const tar = spawnSync(
      'tar',
      ['-C', stage, '--owner=0', '--group=0', '--sort=name', '-I', xz, '-cf', archive, name],
      { encoding: 'utf8' },
    );
    if (tar.status !== 0) fail(`tar failed (GNU tar and xz-utils are needed): ${tar.stderr || tar.error}`);
    const data = readFileSync(archive);
    const bytes = data.length;
    const sha = createHash('sha256').update(data).digest('hex');
    writeFileSync(`${archive}.sha256`, `${sha}  ${name}.tar.xz\n`);
    const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    process.stdout.write(
      `bundle: ${archive}\n` +
        `  ${mib(bytes)} compressed (limit ${mib(MAX_BUNDLE_BYTES)}), ${mib(unpacked)} unpacked; ` +
        `${packages.length} production packages, ${mib(pruned)} pruned (other platforms' binaries, types, maps)\n` +
        `  Node.js ${nodeVersion(node)} for ${o.platform}; sha256 ${sha}\n`,
    );
    if (bytes > MAX_BUNDLE_BYTES) {
      rmSync(archive);
      rmSync(`${archive}.sha256`);
      fail(
        `the archive is ${mib(bytes)}, over the ${mib(MAX_BUNDLE_BYTES)} limit: it was removed; prune more or check what grew`,
      );
    }
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

main();
