import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lambdas/ledger/seal.js';

// The text every seal is computed over: it must never change, or every sealed ledger fails to verify.
describe('canonicalJson (the sealed text)', () => {
  it('sorts keys at every depth, drops undefined fields, writes undefined array entries as null', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, undefined, { z: true, y: null }], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[1,null,{"y":null,"z":true}]},"b":1}');
  });

  it('writes a set as a sorted array (DynamoDB returns string sets in no order)', () => {
    expect(canonicalJson({ s: new Set(['b', 'a', 'c']) })).toBe('{"s":["a","b","c"]}');
  });

  it('is JSON.stringify for primitives and escapes as JSON does', () => {
    expect(['x"y\u2028', 0, -1.5, true, null].map(canonicalJson)).toEqual(['"x\\"y\u2028"', '0', '-1.5', 'true', 'null']);
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });

  it('keeps an own "__proto__" key (JSON allows it) as a key', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"a":1},"k":2}'))).toBe('{"__proto__":{"a":1},"k":2}');
  });

  it('writes exactly the text of its definition for any record, whatever its keys and values', () => {
    // The definition, written plainly: sorted keys, JSON.stringify for every key and primitive.
    const reference = (value: unknown): string => {
      if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
      if (value instanceof Set) return reference([...value].sort());
      if (Array.isArray(value)) return `[${value.map((entry) => (entry === undefined ? 'null' : reference(entry))).join(',')}]`;
      const fields = Object.keys(value)
        .sort()
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .map((key) => `${JSON.stringify(key)}:${reference((value as Record<string, unknown>)[key])}`);
      return `{${fields.join(',')}}`;
    };
    // Keys with quotes, backslashes, control characters, lone surrogates and "__proto__"; numbers with -0, NaN and infinities.
    const key = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('__proto__', 'a"b', 'c\\d', '\u0001', '\ud800', 'runId', 'kind', '10', '2'));
    const leaf = fc.oneof(fc.string({ unit: 'binary' }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY));
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value')), fc.dictionary(key, tie('value')), fc.uniqueArray(fc.string()).map((items) => new Set(items))),
    }));
    fc.assert(fc.property(value, (record) => canonicalJson(record) === reference(record)), { numRuns: 2_000 });
    // A record parsed from JSON with its keys already in order, and one with its own "__proto__" key.
    for (const text of ['{"a":1,"b":{"c":[1,2,{"d":"e"}]}}', '{"__proto__":{"z":1,"a":2},"k":-0}']) expect(canonicalJson(JSON.parse(text))).toBe(reference(JSON.parse(text)));
  });
});
