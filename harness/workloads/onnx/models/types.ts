// The shape of a generated model: its bytes and its inputs with the symbolic batch dimension.
import type { ValueSpec } from './graph.js';

export interface GeneratedModel {
  bytes: Uint8Array;
  inputs: ValueSpec[];
}
