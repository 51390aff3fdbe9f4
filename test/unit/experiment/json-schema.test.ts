// The exported JSON Schema (tunebench schema, experiments/schema.json): JSON Schema 2020-12 in
// shape, with the model union on `generate` and the stage union on `kind`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonSchema } from '../../../harness/experiment/schema.js';
import { MODEL_DEFAULTS, MODEL_KINDS } from '../../../harness/workloads/onnx/models/index.js';

type Node = Record<string, unknown>;

/** Keywords of JSON Schema 2020-12 (core, applicator, validation, meta-data) that a schema may use. */
const KEYWORDS = new Set([
  '$schema',
  '$id',
  '$ref',
  '$defs',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'patternProperties',
  'minProperties',
  'maxProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'minLength',
  'maxLength',
  'format',
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** Every problem that makes `node` (at `at`) not a 2020-12 schema; walks every subschema. */
function problems(node: unknown, at: string, root = false): string[] {
  if (typeof node === 'boolean') return [];
  if (typeof node !== 'object' || node === null || Array.isArray(node))
    return [`${at}: a schema must be an object or a boolean`];
  const n = node as Node;
  const out: string[] = [];
  for (const key of Object.keys(n)) if (!KEYWORDS.has(key)) out.push(`${at}: unknown keyword ${key}`);
  if ('$schema' in n && !root) out.push(`${at}: $schema below the root`);
  for (const t of [n['type']].flat())
    if (t !== undefined && !TYPES.has(t as string)) out.push(`${at}: type ${String(t)}`);
  for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'maxItems']) {
    // Draft 4 wrote exclusiveMinimum as a boolean; 2020-12 takes the bound itself.
    if (k in n && typeof n[k] !== 'number') out.push(`${at}: ${k} must be a number`);
  }
  if (typeof n['pattern'] === 'string') {
    try {
      new RegExp(n['pattern'], 'u');
    } catch {
      out.push(`${at}: pattern ${n['pattern']} is not an ECMA-262 regular expression`);
    }
  }
  if ('required' in n) {
    const props = Object.keys((n['properties'] as Node | undefined) ?? {});
    for (const r of n['required'] as string[])
      if (!props.includes(r)) out.push(`${at}: required ${r} is not a property`);
  }
  if ('items' in n && Array.isArray(n['items']))
    out.push(`${at}: items must be one schema in 2020-12 (prefixItems for tuples)`);
  if ('enum' in n && !Array.isArray(n['enum'])) out.push(`${at}: enum must be a list`);
  for (const [k, v] of Object.entries((n['properties'] as Node | undefined) ?? {}))
    out.push(...problems(v, `${at}.properties.${k}`));
  for (const k of ['additionalProperties', 'items', 'propertyNames', 'not', 'contains'])
    if (k in n) out.push(...problems(n[k], `${at}.${k}`));
  for (const k of ['oneOf', 'anyOf', 'allOf', 'prefixItems']) {
    if (k in n) for (const [i, s] of (n[k] as unknown[]).entries()) out.push(...problems(s, `${at}.${k}[${i}]`));
  }
  return out;
}

const schema = jsonSchema() as Node;
const props = (n: unknown) => (n as { properties: Record<string, Node> }).properties;
const variants = (n: unknown) => (n as { oneOf: Node[] }).oneOf;
const constOf = (n: Node, key: string) => (props(n)[key] as { const?: unknown }).const;

describe('the exported JSON Schema', () => {
  it('is a JSON Schema 2020-12 document', () => {
    assert.equal(schema['$schema'], 'https://json-schema.org/draft/2020-12/schema');
    assert.equal(schema['$id'], 'https://tunebench.dev/schema/experiment.json');
    assert.equal(schema['title'], 'tunebench experiment');
    assert.deepEqual(problems(schema, '#', true), []);
  });

  it('refuses unknown keys and keeps the field descriptions and defaults', () => {
    assert.equal(schema['additionalProperties'], false);
    assert.match(String(props(schema)['name']!['description']), /names the run/);
    const limits = props(schema)['limits']!;
    assert.equal(limits['additionalProperties'], false);
    assert.equal(props(limits)['mechanism']!['default'], 'auto');
    assert.match(String(props(limits)['timeout']!['description']), /wall-clock limit/);
  });

  it('has the generated models as a union on generate, each kind with only its own fields', () => {
    const onnx = variants(props(schema)['workload']).find((w) => constOf(w, 'kind') === 'onnx')!;
    const generated = variants(props(onnx)['model']).find((m) => 'oneOf' in m)!;
    assert.deepEqual(
      variants(generated).map((g) => constOf(g, 'generate')),
      [...MODEL_KINDS],
    );
    for (const g of variants(generated)) {
      const kind = constOf(g, 'generate') as (typeof MODEL_KINDS)[number];
      assert.equal(g['additionalProperties'], false, kind);
      assert.deepEqual(g['required'], ['generate'], kind);
      assert.deepEqual(Object.keys(props(g)), ['generate', 'seed', ...Object.keys(MODEL_DEFAULTS[kind])], kind);
      for (const [field, value] of Object.entries(MODEL_DEFAULTS[kind]))
        assert.equal(props(g)[field]!['default'], value, `${kind}.${field}`);
    }
  });

  it('has the stages as a union on kind, each stage closed to unknown keys', () => {
    const stages = props(schema)['stages']!;
    assert.equal(stages['minItems'], 1);
    const kinds = variants(stages['items']);
    assert.deepEqual(
      kinds.map((k) => constOf(k, 'kind')),
      ['max-batch', 'sweep', 'compare', 'claim'],
    );
    for (const k of kinds) assert.equal(k['additionalProperties'], false);
    assert.deepEqual((kinds[1]!['required'] as string[]).sort(), ['kind', 'params']);
  });
});
