// Where a field of an experiment file is: the line of the deepest node on its path that exists.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';

/** Looks up lines in one file's text; JSON is read as YAML, which keeps the same source ranges. */
export class LineFinder {
  private readonly counter = new LineCounter();
  private readonly doc: Document | undefined;

  constructor(text: string) {
    try {
      this.doc = parseDocument(text, { lineCounter: this.counter, uniqueKeys: false });
    } catch {
      this.doc = undefined;
    }
  }

  /** 1-based line of the field at `path`, or of its nearest ancestor in the file; undefined when unknown. */
  lineOf(path: readonly PropertyKey[]): number | undefined {
    let node: unknown = this.doc?.contents;
    let start = (node as { range?: [number, number, number] } | null | undefined)?.range?.[0];
    for (const key of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(key));
        if (!pair) break;
        start = (pair.key as { range?: [number, number, number] }).range?.[0] ?? start;
        node = pair.value;
      } else if (isSeq(node) && typeof key === 'number') {
        node = node.items[key];
        const range = (node as { range?: [number, number, number] } | undefined)?.range;
        if (!range) break;
        start = range[0];
      } else break;
    }
    return start === undefined ? undefined : this.counter.linePos(start).line;
  }
}
