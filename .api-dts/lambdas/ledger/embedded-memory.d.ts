import type { Span } from './append-log.js';
import { type Stored } from './protocol.js';
import type { Hidden, Item } from './sealed-log.js';
/**
 * The embedded ledger's in-memory form: a Partition per partition key, holding its items (or, let
 * go of, where their lines are), and the items as the engine holds them — record, JSON, hidden
 * attributes, seal — copied out to callers. Which partitions belong together (a run's, an
 * effect's) is said here too: they are let go of and read back together (embedded-tiers.ts).
 */
export declare const RUN_SK: string;
/** The partitions of business-key effects (protocol.ts `effectKey`). */
export declare const EFFECT_PREFIX: string;
/**
 * A partition that guards across runs (a business-key effect, EFFECT#…, or an aggregate, AGG#…):
 * kept in memory while recently used (`retainEffects`), then let go of like a finished run's.
 */
export declare function crossRunPartition(pk: string): boolean;
/** Reads the items of a partition back from their lines (embedded-files.ts `readLines`). */
export type ReadLines = (spans: readonly Span[]) => [string, Item, Span][];
/** A stored item as the protocol reads it: a copy of its record and hidden attributes, and the item itself as the basis of a put. */
export declare function stored(item: Item | undefined): Stored | undefined;
/**
 * The items of one partition, and their sort-key order (computed when a query needs it). On disk,
 * also where each item's line is in the log. Opened to read, an evicted partition (a finished
 * run's) drops its items, keeps only where their lines are (packed: 16 bytes an item) and its run's
 * status, and reads them back when next asked for; opened to write, the ledger drops the whole
 * partition instead (cold-store.ts).
 */
export declare class Partition {
    private readonly read;
    private held?;
    private order?;
    /** Where each held item's line is (on disk). */
    private where?;
    /** Evicted: offset and length of each item's line, and which of them is the run record's. */
    private packed?;
    /** Restored from an index: where its lines are, asked of the index when first needed. */
    private unread?;
    /** The status and creation time of the run record (RUN partitions): what listing the runs reads. */
    status?: string;
    createdAt?: string;
    /** What the cold store holds of this partition is current: it was read back from there, and has not changed since. */
    noted: boolean;
    constructor(read: ReadLines);
    /** A partition of the items read from `entries` and where their lines are; `noted`: as the cold store holds them. */
    static filled(read: ReadLines, entries: readonly [string, Item, Span][], noted: boolean): Partition;
    /** Each item in memory, and where its line is (undefined: not on disk). */
    entries(): Generator<[string, Item, Span | undefined]>;
    get items(): Map<string, Item>;
    /** The run record's item (RUN partitions), read back alone when the partition is evicted. */
    runItem(): Item | undefined;
    /** Where the lines of an evicted partition are (asked of the index, for one restored from it). */
    private pack;
    /** Removes the item under `sk` (a prune). */
    delete(sk: string): void;
    put(sk: string, stored: Item, span?: Span): void;
    /** Drops the items from memory: only a partition whose every item has its line on disk can read them back. */
    evict(): void;
    /** Evicted from the start, as an index records it: where its lines are (`unread`, asked for when first needed), and its run's status and creation time. */
    restore(unread: () => {
        lines: readonly Span[];
        run: Span | undefined;
    }, status: string | undefined, createdAt: string | undefined): void;
    /** The log was rewritten: the item under `sk` is now the line at `span`. */
    relocated(sk: string, span: Span): void;
    sorted(): [string, Item][];
}
/** The group a partition is let go of with (cold-store.ts): its run's (`RUN#<runId>`), or its own. */
export declare function groupOfPartition(pk: string): string;
/** The run whose partition `pk` is (RUN_SCOPED), else undefined. */
export declare function runOfPartition(pk: string): string | undefined;
/** Whether a put's expected item is the current one: the same object, or (read back from the log) the same sealed content. */
export declare function sameItem(current: Item | undefined, expected: Item | undefined): boolean;
/** An item as the embedded ledger holds it: its record, the record's JSON, its hidden attributes, its seal. */
export declare function item<T>(record: T, hidden: Hidden, seal: string): Item<T>;
/** A fresh copy of a stored record (for listConversation's hundreds of records, ~5× faster than parsing its JSON). */
export declare function copy<T>(stored: Item<T>): T;
/** Deep-copies a value parsed from JSON: plain objects, arrays and primitives only. */
export declare function cloneJson(value: unknown): unknown;
