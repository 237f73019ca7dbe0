import type { IncomingMessage, ServerResponse } from 'node:http';
export declare const TRANSACT_WRITE_ITEMS = "DynamoDB_20120810.TransactWriteItems";
/** Captures the store dynalite makes for its server (`db.create`), for `serveTransaction`. */
export declare function capturingStore<T>(start: () => T): {
    server: T;
    store: unknown;
};
export interface TransactionOptions {
    /**
     * Awaited while a transaction holds its items, before it checks and writes them: a slow
     * transaction, so that other writes meet it in flight (dynalite's takes microseconds, DynamoDB's
     * several round trips inside the service). @default none
     */
    readonly latency?: () => Promise<void>;
}
/** The plain writes DynamoDB rejects when they meet a transaction in flight on their item. */
export declare const ITEM_WRITES: Set<string>;
/**
 * The error DynamoDB answers a PutItem, UpdateItem or DeleteItem (its JSON `body`) with when a
 * transaction is in flight on its item, or undefined when none is (or the request is not one
 * dynalite would serve: it answers that itself).
 */
export declare function conflictOfWrite(store: any, body: string): Promise<{
    __type: string;
    message: string;
} | undefined>;
/** Answers one TransactWriteItems request from its JSON body. */
export declare function serveTransaction(store: any, request: IncomingMessage, response: ServerResponse, options?: TransactionOptions): Promise<void>;
