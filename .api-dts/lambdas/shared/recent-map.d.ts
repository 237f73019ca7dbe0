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
export declare class RecentMap<K, V> {
    #private;
    readonly limit: number;
    /** @param limit the most entries kept (at least 1) */
    constructor(limit: number);
    get size(): number;
    /** The value under `key` (now the most recently used), or undefined. */
    get(key: K): V | undefined;
    /** Keeps `value` under `key` as the most recently used entry, forgetting the least recently used past `limit`. */
    set(key: K, value: V): void;
    /** The value under `key`, made by `make` (and kept) when there is none. */
    getOrSet(key: K, make: () => V): V;
    clear(): void;
}
