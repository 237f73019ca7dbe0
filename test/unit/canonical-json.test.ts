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
});
