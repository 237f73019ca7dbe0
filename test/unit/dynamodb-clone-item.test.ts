import { describe, expect, it } from 'vitest';
import { cloneItem } from '../../lambdas/ledger/clone-item.js';

// The DynamoDB ledger keeps a copy of every item it read or wrote as the basis of its next
// conditional put, and hands callers another: a caller that changes a record must not change it.
describe('cloneItem (the DynamoDB ledger basis copy)', () => {
  it('copies maps, lists and sets deeply: changing the copy leaves the item as it was', () => {
    const item = { pk: 'RUN#r', sk: 'RUN', config: { models: ['a', 'b'], nested: { n: 1 } }, guardReasons: new Set(['x']), flag: true, none: null, count: 3 };
    const copy = cloneItem(item);
    expect(copy).toStrictEqual(item);
    copy.config.models.push('c');
    copy.config.nested.n = 2;
    copy.guardReasons.add('y');
    expect(item.config).toStrictEqual({ models: ['a', 'b'], nested: { n: 1 } });
    expect([...item.guardReasons]).toEqual(['x']);
  });

  it('keeps a `__proto__` key an own key, and leaves the copy’s prototype alone', () => {
    const item = JSON.parse('{"args":{"__proto__":{"polluted":true},"a":1}}') as { args: Record<string, unknown> };
    const copy = cloneItem(item);
    expect(Object.keys(copy.args)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(copy.args)).toBe(Object.prototype);
    expect((copy.args as { polluted?: boolean }).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify(item));
  });

  it('copies a binary attribute (Uint8Array) by value', () => {
    const item = { data: new Uint8Array([1, 2, 3]) };
    const copy = cloneItem(item);
    copy.data[0] = 9;
    expect([...item.data]).toEqual([1, 2, 3]);
    expect(copy.data).toBeInstanceOf(Uint8Array);
  });
});
