import type { StorageCall } from '../../lambdas/ledger/storage-ledger.js';
/** What DynamoDB answers a put of an item over the limit (HTTP 400, not retried). */
export declare class ItemSizeError extends Error {
    readonly $fault = "client";
    readonly statusCode = 400;
    constructor();
}
/** The size of an item (native values, as the document client takes them), in DynamoDB's bytes. */
export declare function itemSize(item: Readonly<Record<string, unknown>>): number;
/**
 * A bound that `itemSize` never exceeds, cheap enough for every put: a string counts 3 bytes per
 * UTF-16 unit (UTF-8 needs at most 3 for one unit, 4 for a surrogate pair of two), a JavaScript
 * number 12 (at most 17 significant digits: 1 + 9 + 1 for an even exponent + 1 for a sign), an
 * absent value as a null; the rest as `itemSize` counts them. What `itemSize` refuses it refuses.
 */
export declare function itemSizeBound(item: Readonly<Record<string, unknown>>): number;
/**
 * The storage guard (`StorageLedger.guardStorage`) that refuses a put of a record over the limit,
 * for the engine that is not DynamoDB (on dynalite, dynalite refuses it itself).
 */
export declare function itemSizeGuard(): (call: StorageCall) => void;
