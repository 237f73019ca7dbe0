import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, hmacSealer, sealedText, UNSEALED_ATTRIBUTES } from '../../lambdas/ledger/seal.js';

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

  it('seals the text it always sealed: the key and the sealed attributes, copied by assignment first as they were', () => {
    // The definition sealedText replaced: the attributes outside UNSEALED_ATTRIBUTES and not undefined, copied by
    // assignment (so a top-level "__proto__" became the copy's prototype, not a key), then canonicalJson.
    const former = (pk: string, sk: string, attributes: Record<string, unknown>) => {
      const kept: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(attributes)) if (!UNSEALED_ATTRIBUTES.has(name) && value !== undefined) kept[name] = value;
      return canonicalJson([pk, sk, kept]);
    };
    const key = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'seal', 'expiresAt', 'taskToken', 'runId', 'status', 'b', 'a', '10', '2', 'a"b'));
    const leaf = fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constantFrom(-0, Number.NaN));
    const { value } = fc.letrec((tie) => ({ value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value')), fc.dictionary(key, tie('value'))) }));
    // Records as a store reads them back: parsed from JSON (an own "__proto__" key kept), and as written.
    const attributes = fc.oneof(fc.dictionary(key, value), fc.dictionary(key, value).map((record) => JSON.parse(JSON.stringify(record)) as Record<string, unknown>));
    fc.assert(
      fc.property(fc.string(), fc.string(), attributes, (pk, sk, record) => sealedText({ pk, sk }, record) === former(pk, sk, record)),
      { numRuns: 1_000 },
    );
    const parsed = JSON.parse('{"__proto__":{"a":1},"status":"done","seal":"s","expiresAt":1,"n":-0,"u":null}') as Record<string, unknown>;
    expect(sealedText({ pk: 'RUN#r', sk: 'RUN' }, parsed)).toBe('["RUN#r","RUN",{"n":0,"status":"done","u":null}]');
    // And the seal over it is the seal of that text, under the key's own seal key.
    const sealer = hmacSealer(new Uint8Array(32).fill(7));
    expect(() => sealer.verify({ pk: 'RUN#r', sk: 'RUN' }, parsed, sealer.seal({ pk: 'RUN#r', sk: 'RUN' }, { n: 0, status: 'done', u: null }))).not.toThrow();
  });
});
