import { type ConnectionLimits } from '../shared/loopback-server.js';
import type { Ledger } from './ledger.js';
export interface ServedLedger {
    /** Where `RemoteLedger` reaches it (secret included). */
    readonly url: string;
    close(): Promise<void>;
}
/** Serves `ledger` on a loopback port, under `limits` (lambdas/shared/loopback-server.ts). */
export declare function serveLedger(ledger: Ledger, limits?: ConnectionLimits): Promise<ServedLedger>;
/** An error the served ledger threw, under the same name (e.g. ConditionalCheckFailedException). */
export declare class RemoteLedgerError extends Error {
    readonly name: string;
    constructor(name: string, message: string);
}
/** The `Ledger` of a running engine, reached through `serveLedger`'s URL. */
export declare class RemoteLedger {
    private readonly url;
    private readonly agent;
    constructor(url: string);
    /** Creates the client; every `Ledger` method is one POST. */
    static connect(url: string): Ledger & {
        close(): void;
    };
    private call;
    private post;
}
