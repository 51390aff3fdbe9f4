// Generated ONNX models: deterministic bytes, seeded weights and an on-disk cache keyed by parameters.
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ensureModel, generate } from '../../../harness/workloads/onnx/models/index.js';
import { onnxProto } from '../../../harness/workloads/onnx/models/graph.js';
import { tempDir } from '../../support/paths.js';

describe('generated models', () => {
  it('are byte-identical for the same parameters and seed, and differ by seed', () => {
    for (const kind of ['mlp', 'conv', 'transformer'] as const) {
      const a = generate({ kind, seed: 3, params: {} }).bytes;
      const b = generate({ kind, seed: 3, params: {} }).bytes;
      const c = generate({ kind, seed: 4, params: {} }).bytes;
      assert.deepEqual(Buffer.from(a), Buffer.from(b), kind);
      assert.notDeepEqual(Buffer.from(a), Buffer.from(c), kind);
    }
  });

  it('declare a symbolic batch dimension and follow their size parameters', () => {
    const m = onnxProto().ModelProto.decode(
      generate({ kind: 'mlp', seed: 1, params: { input: 32, hidden: 16, layers: 2 } }).bytes,
    );
    const dims = m.graph!.input![0]!.type!.tensorType!.shape!.dim!;
    assert.equal(dims[0]!.dimParam, 'batch');
    assert.equal(Number(dims[1]!.dimValue), 32);
    const weights = m.graph!.initializer!.filter((t) => t.dims!.length === 2).map((t) => t.dims!.map(Number));
    assert.deepEqual(weights, [
      [32, 16],
      [16, 16],
      [16, 10],
    ]);
    assert.equal(Number(m.opsetImport[0]!.version), 17);
    // The builder writes FLOAT and INT64 as numbers (onnx-proto loads on first use): they are the proto's.
    assert.ok(m.graph!.initializer!.every((t) => t.dataType === onnxProto().TensorProto.DataType.FLOAT));
    assert.equal(m.graph!.input![0]!.type!.tensorType!.elemType, onnxProto().TensorProto.DataType.FLOAT);
    assert.equal(onnxProto().TensorProto.DataType.INT64, 7);
  });

  it('rejects a transformer whose width does not split into heads', () => {
    assert.throws(() => generate({ kind: 'transformer', seed: 1, params: { dim: 30, heads: 4 } }), /multiple of heads/);
  });

  it('are cached on disk by parameters and reused', () => {
    const dir = tempDir();
    const a = ensureModel({ kind: 'mlp', seed: 1, params: { hidden: 8 } }, dir);
    const mtime = statSync(a.path).mtimeMs;
    const again = ensureModel({ kind: 'mlp', seed: 1, params: { hidden: 8 } }, dir);
    assert.equal(again.path, a.path);
    assert.equal(statSync(again.path).mtimeMs, mtime, 'not rewritten');
    assert.deepEqual(again.inputs, { input: ['batch', 1024] });
    const other = ensureModel({ kind: 'mlp', seed: 1, params: { hidden: 9 } }, dir);
    assert.notEqual(other.path, a.path);
    assert.equal(readdirSync(dir).filter((f) => f.endsWith('.onnx')).length, 2);
  });
});
