import { describe, expect, it } from 'vitest';
import { cloneJson, frozenInPlace } from '../../lambdas/ledger/embedded-memory.js';
import { NOT_PLAIN, plainCopy } from '../../lambdas/shared/plain-copy.js';

// The embedded ledger stores a write's record as plainCopy(record) in place of JSON.parse(JSON.stringify(record)):
// the two must agree on every value plainCopy copies, and plainCopy must refuse what JSON would change.
describe('plainCopy', () => {
  const viaJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

  it('copies plain JSON data as a JSON round trip does, key order, undefined fields and "__proto__" keys included', () => {
    const values: unknown[] = [
      { runId: 'r1', status: 'running', steps: 3, dollars: 0.125, done: false, note: null, config: { maxSteps: 10, models: ['a', 'b'] } },
      { b: 1, a: 2, 10: 'ten', 2: 'two', nested: [{ z: 1, y: [[], {}] }], left: undefined },
      JSON.parse('{"__proto__": {"polluted": true}, "x": 1}'),
      [1, 'two', { three: 3 }, [4]],
      'text',
      1e21,
      -5,
    ];
    for (const value of values) {
      const copy = plainCopy(value);
      expect(copy).toStrictEqual(viaJson(value));
      expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
      expect(Object.getPrototypeOf(copy === null || typeof copy !== 'object' ? {} : copy)).toBe(Array.isArray(copy) ? Array.prototype : Object.prototype);
    }
    const parsed = plainCopy(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('is a deep copy: changing the copy leaves the original as it was', () => {
    const original = { list: [{ a: 1 }], inner: { b: 2 } };
    const copy = plainCopy(original) as typeof original;
    copy.list[0]!.a = 9;
    copy.inner.b = 9;
    expect(original).toEqual({ list: [{ a: 1 }], inner: { b: 2 } });
  });

  it('refuses what a JSON round trip would change, so that the caller copies it through JSON', () => {
    class Money {
      amount = 1;
    }
    const refused: unknown[] = [
      { at: new Date(0) },
      { money: new Money() },
      { list: [1, undefined] },
      { list: [1, , 3] },
      { n: Number.NaN },
      { n: Number.POSITIVE_INFINITY },
      { n: -0 },
      { f: () => 1 },
      { own: { toJSON: () => 'x' } },
      { nullProto: Object.create(null) as object },
      { set: new Set([1]) },
      { big: 1n },
      { s: Symbol('s') },
    ];
    for (const value of refused) expect(plainCopy(value)).toBe(NOT_PLAIN);
  });

  it('freezes the copy all through when asked, and takes what it froze before as it is, a caller\'s frozen object not', () => {
    const run = { runId: 'r1', steps: 1, config: { maxSteps: 10, models: ['a'] } };
    const stored = plainCopy(run, true) as typeof run;
    expect(stored).toStrictEqual(run);
    for (const part of [stored, stored.config, stored.config.models]) expect(Object.isFrozen(part)).toBe(true);
    // A record written back with one counter changed (a run record, every step): only what changed is copied.
    const next = plainCopy({ ...stored, steps: 2 }, true) as typeof run;
    expect(next).toStrictEqual({ ...run, steps: 2 });
    expect(next.config).toBe(stored.config);
    // Frozen by someone else, it may hold what is not plain data, or change beneath: copied.
    const theirs = Object.freeze({ list: [1] });
    expect((plainCopy({ theirs }, true) as { theirs: unknown }).theirs).not.toBe(theirs);
    expect(plainCopy({ config: stored.config, at: new Date(0) }, true)).toBe(NOT_PLAIN);
  });
});

// A store that shares its records (a replay's) keeps a written record itself when a JSON round trip
// would give it back as it is, frozen all through: its writer's later change throws, it cannot go unseen.
describe('frozenInPlace', () => {
  it('keeps plain data itself, every object and array in it frozen, a writer-frozen object\'s own too', () => {
    const shallow = Object.freeze({ args: { id: 1 } });
    const record = { runId: 'r1', steps: 3, config: { models: ['a', { b: [1] }] }, shallow, note: null };
    const text = JSON.stringify(record);
    expect(frozenInPlace(record)).toBe(record);
    for (const part of [record, record.config, record.config.models, record.config.models[1], shallow, shallow.args]) expect(Object.isFrozen(part)).toBe(true);
    expect(() => (record.config.models as unknown[]).push('c')).toThrow(TypeError);
    expect(() => ((shallow.args as { id: number }).id = 2)).toThrow(TypeError);
    expect(JSON.stringify(record)).toBe(text);
  });

  it('refuses what a JSON round trip would change, an undefined field too, and leaves the writer\'s objects as they were', () => {
    const refused: Record<string, unknown>[] = [{ inner: { a: 1 }, left: undefined }, { inner: { a: 1 }, at: new Date(0) }, { inner: { a: 1 }, list: [1, undefined] }, { inner: { a: 1 }, n: Number.NaN }];
    for (const value of refused) {
      expect(frozenInPlace(value)).toBe(NOT_PLAIN);
      expect(Object.isFrozen(value)).toBe(false);
      expect(Object.isFrozen(value.inner)).toBe(false);
    }
  });
});

describe('cloneJson', () => {
  it('copies what JSON.parse returns, deeply and in key order', () => {
    const parsed = JSON.parse('{"b":[1,{"c":[2,3]}],"a":{"__proto__":{"x":1}},"5":null}') as unknown;
    const copy = cloneJson(parsed);
    expect(copy).toStrictEqual(parsed);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
    expect(copy).not.toBe(parsed);
    expect((copy as { b: unknown[] }).b).not.toBe((parsed as { b: unknown[] }).b);
    // An own "__proto__" key is copied as a key (and its value as a copy), never made the prototype.
    const a = (copy as { a: object }).a;
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(Object.keys(a)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(a, '__proto__')?.value).toStrictEqual({ x: 1 });
    expect(Object.getOwnPropertyDescriptor(a, '__proto__')?.value).not.toBe(Object.getOwnPropertyDescriptor((parsed as { a: object }).a, '__proto__')?.value);
  });

  it('shares no object or array with what it copied, at any depth', () => {
    const parsed = JSON.parse('{"a":[[1,[2,{"b":{"c":[3]}}]],{"d":{}}],"e":{"f":{"g":[[],{}]}},"__proto__":[{"h":1}]}') as unknown;
    const objects = (value: unknown, into: object[] = []): object[] => {
      if (typeof value !== 'object' || value === null) return into;
      into.push(value);
      for (const key of Object.keys(value)) objects((value as Record<string, unknown>)[key], into);
      return into;
    };
    const copy = cloneJson(parsed);
    expect(copy).toStrictEqual(parsed);
    const original = new Set(objects(parsed));
    expect(objects(copy)).toHaveLength(original.size);
    expect(objects(copy).filter((object) => original.has(object))).toEqual([]);
  });
});
