/**
 * A memo that keeps only its `limit` most recently used entries: what a cache keyed by run (or by
 * a request that names a run) needs in a process that lives through many runs — a Lambda
 * container, the local engine — so that a finished run's entries leave once newer runs have
 * taken their place, instead of staying for the life of the process.
 *
 * @example
 * const lineages = new RecentMap<string, Promise<Lineage>>(64);
 * const lineage = lineages.getOrSet(runId, () => ledger.getRun(runId));
 */
/** No key yet (a key may itself be undefined). */
const NONE: unique symbol = Symbol('none');

export class RecentMap<K, V> {
  // A Map iterates in insertion order: each entry is re-inserted when used, so the first key is
  // the least recently used one.
  readonly #entries = new Map<K, V>();
  /** The most recently used key: using it again moves nothing (a hot key is asked for many times in a row). */
  #newest: K | typeof NONE = NONE;

  /** @param limit the most entries kept (at least 1) */
  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`RecentMap limit must be at least 1, got ${limit}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value under `key` (now the most recently used), or undefined. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined || this.#entries.has(key)) this.#touch(key, value!);
    return value;
  }

  /** Keeps `value` under `key` as the most recently used entry, forgetting the least recently used past `limit`. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, value);
    this.#newest = key;
  }

  /** The value under `key`, made by `make` (and kept) when there is none. */
  getOrSet(key: K, make: () => V): V {
    const value = this.#entries.get(key);
    if (value !== undefined || this.#entries.has(key)) {
      this.#touch(key, value!);
      return value!;
    }
    const made = make();
    this.set(key, made);
    return made;
  }

  /** `key` becomes the most recently used entry. */
  #touch(key: K, value: V): void {
    if (key === this.#newest) return;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    this.#newest = key;
  }

  clear(): void {
    this.#entries.clear();
    this.#newest = NONE;
  }
}
