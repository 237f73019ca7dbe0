/**
 * `items` mapped by `each`, at most `limit` of them at once, the results in the order of `items`:
 * for work that is one request an item (a read of each key a scan found), which a service may
 * throttle when thousands arrive together. The first failure rejects; no item is begun after it.
 *
 * @example
 * const records = await mapBounded(keys, 16, (key) => ledger.getEffect(key));
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await each(items[index]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
