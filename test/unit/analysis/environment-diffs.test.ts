// Environment differences are typed facts (field, package) with a sentence for the reader; history
// and resume filter on the field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { environmentDiffs, environmentDifferences } from '../../../harness/analysis/compare-runs.js';
import type { Fingerprint } from '../../../harness/domain/index.js';
import { environmentKey } from '../../../harness/history/index.js';
import { isPython, workloadStack } from '../../../harness/telemetry/workload-stack.js';
import { PYTHON, requireSystem } from '../../support/system.js';

const base = {
  host: 'node1',
  cpu: { model: 'AMD EPYC', cores: 2 },
  gpu: null,
  memory_bytes: 24 * 2 ** 30,
  kernel: '6.1.0',
  versions: { node: '20.20.0', torch: '1.13.0' },
} as unknown as Fingerprint;

describe('environment differences', () => {
  it('name the field that differs, and the package of a version, with the sentence printed', () => {
    const after = { ...base, host: 'node2', versions: { node: '20.20.0', torch: '2.1.0' } } as Fingerprint;
    const diffs = environmentDiffs(base, after);
    assert.deepEqual(
      diffs.map((d) => [d.field, d.name]),
      [
        ['host', undefined],
        ['version', 'torch'],
      ],
    );
    assert.deepEqual(environmentDifferences(base, after), [
      'host differs: "node1" before, "node2" after',
      'torch version differs: "1.13.0" before, "2.1.0" after',
    ]);
    assert.deepEqual(environmentDiffs(base, base), []);
  });

  it('say when a fingerprint is missing', () => {
    assert.deepEqual(
      environmentDiffs(base, undefined).map((d) => d.field),
      ['fingerprint'],
    );
  });
});

describe("the workload's stack in the fingerprint", () => {
  const stack = (torch: string, cuda: string | null = null) => ({
    interpreter: '/usr/bin/python3',
    python: '3.11.2',
    packages: { torch, numpy: '1.24.2' },
    cuda,
  });
  const run = (versions: Record<string, string>, workload?: ReturnType<typeof stack> | null) => ({
    ...base,
    versions,
    ...(workload !== undefined ? { workload } : {}),
  });

  it('splits a series when torch or its CUDA changes, never when tunebench or Node.js do', () => {
    const a = run({ tunebench: '0.1.0', node: '20.20.0' }, stack('1.13.1'));
    const harnessBump = run({ tunebench: '0.2.0', node: '24.1.0' }, stack('1.13.1'));
    assert.equal(environmentKey(a).key, environmentKey(harnessBump).key);
    assert.notEqual(environmentKey(a).key, environmentKey(run(a.versions, stack('2.1.0'))).key);
    assert.notEqual(environmentKey(a).key, environmentKey(run(a.versions, stack('1.13.1', '12.1'))).key);
    assert.equal(environmentKey(a).label, 'AMD EPYC, 2 cores, no GPU; python 3.11.2, numpy 1.24.2, torch 1.13.1');
    // An ONNX workload (no Python): onnxruntime-node is its stack; Node.js is still the harness's.
    const onnx = run({ tunebench: '0.1.0', node: '20.20.0', 'onnxruntime-node': '1.30.0' });
    assert.equal(environmentKey(onnx).label, 'AMD EPYC, 2 cores, no GPU; onnxruntime-node 1.30.0');
    assert.equal(
      environmentKey(onnx).key,
      environmentKey({ ...onnx, versions: { ...onnx.versions, node: '24.0.0' } }).key,
    );
    assert.notEqual(
      environmentKey(onnx).key,
      environmentKey({ ...onnx, versions: { ...onnx.versions, 'onnxruntime-node': '1.31.0' } }).key,
    );
  });

  it('shows in compare as the workload stack that differs', () => {
    const before = run({ node: '20.20.0' }, stack('1.13.1'));
    const after = run({ node: '20.20.0' }, stack('2.1.0', '12.1'));
    assert.deepEqual(environmentDifferences(before, after), [
      'the workload\'s CUDA (of torch) version differs: null before, "12.1" after',
      'the workload\'s torch version differs: "1.13.1" before, "2.1.0" after',
    ]);
    // A run recorded before the stack was kept is not called different for lacking it.
    assert.deepEqual(environmentDiffs(run({ node: '20.20.0' }), after), []);
  });

  it('is read from the interpreter without importing torch, and is null for anything that is not its probe', () => {
    assert.equal(isPython('/usr/bin/python3'), true);
    assert.equal(isPython('python3.12'), true);
    assert.equal(isPython('/usr/bin/node'), false);
    assert.equal(isPython('python-config'), false);
    assert.equal(workloadStack('/nonexistent/python3'), null);
    // A program that prints something else than the probe's JSON.
    assert.equal(workloadStack('/bin/echo'), null);
  });

  it("reads Debian's python3 and its torch", { skip: requireSystem('torch') }, () => {
    const s = workloadStack(PYTHON);
    assert.ok(s, 'the probe read /usr/bin/python3');
    assert.match(s.python, /^3\.\d+\.\d+/);
    assert.match(s.packages['torch'] ?? '', /^\d+\.\d+/);
    assert.match(s.packages['numpy'] ?? '', /^\d+\.\d+/);
    assert.equal(s.cuda, null, "Debian's torch is a CPU build");
  });
});
