import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../lambdas/shared/bounded-map.js';

/** Promises settled by the test, one per item begun: which are in flight, and in what order they began. */
function gated() {
  const begun: number[] = [];
  const open = new Map<number, { resolve: (value: string) => void; reject: (error: Error) => void }>();
  const each = (item: number) =>
    new Promise<string>((resolve, reject) => {
      begun.push(item);
      open.set(item, { resolve: (value) => (open.delete(item), resolve(value)), reject: (error) => (open.delete(item), reject(error)) });
    });
  // The worker takes its next item on a later turn of the microtask queue.
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const settle = async (item: number, error?: Error) => {
    if (error) open.get(item)!.reject(error);
    else open.get(item)!.resolve(`#${item}`);
    await tick();
  };
  return { begun, open, each, settle, tick };
}

const failure = new Error('throttled');

describe('mapBounded', () => {
  it('keeps at most `limit` items in flight, begins the next as one ends, and answers in the order of the items', async () => {
    const { begun, open, each, settle, tick } = gated();
    const mapped = mapBounded([0, 1, 2, 3, 4], 2, each);
    await tick();
    expect(begun).toEqual([0, 1]);
    await settle(1);
    expect(begun).toEqual([0, 1, 2]);
    await settle(0);
    expect(begun).toEqual([0, 1, 2, 3]);
    expect(open.size).toBe(2);
    await settle(3);
    await settle(2);
    await settle(4);
    expect(begun).toEqual([0, 1, 2, 3, 4]);
    expect(await mapped).toEqual(['#0', '#1', '#2', '#3', '#4']);
  });

  it('rejects with the first failure and begins no item after it', async () => {
    const { begun, each, settle, tick } = gated();
    const mapped = mapBounded([0, 1, 2, 3], 2, each);
    const rejected = expect(mapped).rejects.toBe(failure);
    await tick();
    await settle(0, failure);
    await rejected;
    await settle(1);
    expect(begun).toEqual([0, 1]);
  });

  it('answers an empty list at once', async () => {
    expect(await mapBounded([], 16, async () => 1)).toEqual([]);
  });
});
