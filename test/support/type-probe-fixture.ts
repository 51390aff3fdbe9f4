// A type with fields a holder could write and fields it could not: the control of the type probe
// (test/unit/code/stage-input.test.ts), read by the compiler from this file.
import type { Frozen } from '../../harness/util/frozen.js';

export interface ProbeFixture {
  count: number;
  readonly list: number[];
  readonly table: Readonly<Record<string, number>>;
  readonly nested: { label: string };
  readonly items: readonly { id: number }[];
  readonly frozen: Frozen<{ a: { b: number[]; c: Record<string, { d: number }> } }>;
  method(): void;
}
