import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonCopy } from '../../lambdas/shared/json.js';

/** What jsonCopy stands for: the round trip through JSON's text. */
const roundTrip = (value: unknown): unknown => {
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
};

/** Equal as values and in key order (Object.is on leaves: -0 and 0 differ). */
const sameAs = (copy: unknown, expected: unknown): void => {
  expect(copy).toStrictEqual(expected);
  expect(JSON.stringify(copy)).toBe(JSON.stringify(expected));
};

describe('jsonCopy (the round trip through JSON, without the text)', () => {
  it('copies any JSON value as the round trip does, sharing nothing mutable with it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = jsonCopy(value);
        sameAs(copy, roundTrip(value));
        if (typeof value === 'object' && value !== null) expect(copy).not.toBe(value);
      }),
    );
  });

  it('gives what the round trip gives for values JSON has no text for', () => {
    fc.assert(
      fc.property(fc.anything({ withBoxedValues: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withObjectString: true }), (value) => {
        let expected: unknown;
        try {
          expected = roundTrip(value);
        } catch (error) {
          expect(() => jsonCopy(value)).toThrow((error as Error).constructor as new () => Error);
          return;
        }
        sameAs(jsonCopy(value), expected);
      }),
    );
  });

  it('drops undefined, functions and symbols from objects, writes them null in arrays, and makes -0, NaN and Infinity what JSON writes', () => {
    const value = { a: undefined, b: () => 1, c: Symbol('s'), d: [undefined, () => 1, Symbol('t'), Number.NaN, -Infinity, -0], e: -0 };
    sameAs(jsonCopy(value), { d: [null, null, null, null, null, 0], e: 0 });
    expect(Object.is((jsonCopy({ e: -0 }) as { e: number }).e, 0)).toBe(true);
  });

  it('calls toJSON (a Date) as JSON does, keeps an own "__proto__" key as a key, and fails on a cycle or a bigint as JSON does', () => {
    sameAs(jsonCopy({ at: new Date(0), nested: { toJSON: (key: string) => `key ${key}` } }), { at: '1970-01-01T00:00:00.000Z', nested: 'key nested' });
    const proto = jsonCopy(JSON.parse('{"__proto__":{"a":1},"k":2}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__', 'k']);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle['self'] = { back: cycle };
    expect(() => jsonCopy(cycle)).toThrow(TypeError);
    expect(() => jsonCopy({ n: 1n })).toThrow(TypeError);
    expect(jsonCopy(undefined)).toBeUndefined();
  });

  it('shares strings (immutable) and copies a tree deeper than it walks through the text', () => {
    let deep: unknown = 'leaf';
    for (let depth = 0; depth < 200; depth++) deep = { d: [deep] };
    sameAs(jsonCopy(deep), roundTrip(deep));
  });
});
