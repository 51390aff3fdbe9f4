// A small builder over onnx-proto for writing ONNX graphs with seeded weights.
import { createRequire } from 'node:module';
import type { onnx as OnnxNs } from 'onnx-proto';
import { createRng, fillUniform } from '../../../stats/rng.js';

const require = createRequire(import.meta.url);
let loaded: typeof OnnxNs | undefined;
/**
 * onnx-proto (and protobufjs under it), loaded on first use: only a run that generates a model pays
 * for it, not every command's start-up. It ships CommonJS; require keeps ESM interop from hiding the namespace.
 */
export function onnxProto(): typeof OnnxNs {
  return (loaded ??= (require('onnx-proto') as { onnx: typeof OnnxNs }).onnx);
}

/** The opset the generated models target (LayerNormalization needs 17). */
export const OPSET = 17;
const FLOAT = 1; // onnxProto().TensorProto.DataType.FLOAT
const INT64 = 7; // onnxProto().TensorProto.DataType.INT64

/** A symbolic or fixed dimension of a graph input or output. */
export type Dim = number | string;

/** Collects nodes, initializers and names while a graph is written. */
export class GraphBuilder {
  readonly nodes: OnnxNs.INodeProto[] = [];
  readonly initializers: OnnxNs.ITensorProto[] = [];
  private counter = 0;
  private readonly rng: () => number;

  constructor(seed: number) {
    this.rng = createRng(seed);
  }

  fresh(prefix: string): string {
    this.counter += 1;
    return `${prefix}_${this.counter}`;
  }

  /** A float weight with Kaiming-like uniform init (scale 1/sqrt(fanIn)). */
  weight(dims: number[], fanIn: number): string {
    const size = dims.reduce((a, b) => a * b, 1);
    const values = fillUniform(new Float32Array(size), this.rng, 1 / Math.sqrt(fanIn));
    return this.floatTensor(this.fresh('w'), dims, values);
  }

  constant(dims: number[], value: number): string {
    const size = dims.reduce((a, b) => a * b, 1);
    return this.floatTensor(this.fresh('c'), dims, new Float32Array(size).fill(value));
  }

  int64s(values: number[]): string {
    const name = this.fresh('shape');
    this.initializers.push({ name, dims: [values.length], dataType: INT64, int64Data: values });
    return name;
  }

  private floatTensor(name: string, dims: number[], values: Float32Array): string {
    const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    this.initializers.push({ name, dims, dataType: FLOAT, rawData: raw });
    return name;
  }

  /** Adds a node and returns the name of its single output. */
  op(opType: string, inputs: string[], attributes: OnnxNs.IAttributeProto[] = []): string {
    const output = this.fresh(opType.toLowerCase());
    this.nodes.push({ opType, input: inputs, output: [output], name: output, attribute: attributes });
    return output;
  }

  /** Encodes the graph as a serialized ModelProto. */
  build(name: string, inputs: ValueSpec[], outputs: ValueSpec[]): Uint8Array {
    const model: OnnxNs.IModelProto = {
      irVersion: 8,
      producerName: 'tunebench',
      opsetImport: [{ domain: '', version: OPSET }],
      graph: {
        name,
        node: this.nodes,
        initializer: this.initializers,
        input: inputs.map(valueInfo),
        output: outputs.map(valueInfo),
      },
    };
    return onnxProto().ModelProto.encode(onnxProto().ModelProto.create(model)).finish();
  }
}

export interface ValueSpec {
  name: string;
  dims: Dim[];
}

function valueInfo(spec: ValueSpec): OnnxNs.IValueInfoProto {
  return {
    name: spec.name,
    type: {
      tensorType: {
        elemType: FLOAT,
        shape: { dim: spec.dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

export const attr = {
  int(name: string, i: number): OnnxNs.IAttributeProto {
    return { name, type: onnxProto().AttributeProto.AttributeType.INT, i };
  },
  ints(name: string, ints: number[]): OnnxNs.IAttributeProto {
    return { name, type: onnxProto().AttributeProto.AttributeType.INTS, ints };
  },
  float(name: string, f: number): OnnxNs.IAttributeProto {
    return { name, type: onnxProto().AttributeProto.AttributeType.FLOAT, f };
  },
};
