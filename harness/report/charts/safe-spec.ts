// Makes a chart spec safe to compile and draw, whatever names and numbers a workload or an
// experiment file put in it. Vega-Lite copies titles into Vega expressions without escaping line
// breaks or backslashes (a newline in an arm name was an "Expression parse error"), and Vega writes
// every string into the SVG as it is (ESC or BEL there is not well-formed XML): so every string
// shows its control characters as symbols, and every non-finite number becomes null.
import type { VlSpec } from './spec.js';

/** Characters that may not reach a spec: controls, line separators, backslash, non-characters, lone surrogates. */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The visible stand-in of one unsafe character. */
function symbol(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code); // U+2400 control pictures: ␊ ␛ ␇
  if (code === 0x7f) return '\u2421'; // ␡
  if (c === '\u2028' || c === '\u2029') return '\u2424'; // ␤
  if (c === '\\') return '\u29f5'; // ⧵ reverse solidus operator: looks like "\" and escapes nothing
  return '\ufffd';
}

/** Text as a chart may show it: every control character as a visible symbol, no backslash. */
export function chartText(text: string): string {
  return text.replace(UNSAFE, symbol);
}

/** A copy of the spec with every string (keys included) through chartText() and every non-finite number null. */
export function safeSpec(spec: VlSpec): VlSpec {
  return safeValue(spec) as VlSpec;
}

function safeValue(v: unknown): unknown {
  if (typeof v === 'string') return chartText(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map(safeValue);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [chartText(k), safeValue(x)]));
  return v;
}

/** XML 1.0 allows tab, LF, CR and these ranges only (the Char production). */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

/** The last guard on an SVG: a character XML does not allow (and C1 controls) becomes U+FFFD. */
export function xmlSafe(text: string): string {
  return text.replace(NOT_XML_CHAR, '\ufffd').replace(/[\u007f-\u009f]/g, '\ufffd');
}
