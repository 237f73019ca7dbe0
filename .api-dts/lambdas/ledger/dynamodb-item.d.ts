/**
 * The DynamoDB engine's items, without the SDK: the index names and partitions, and the item a
 * record is put as. Apart from dynamodb-ledger.ts so that what needs only these (the storage
 * layer's index queries, the local twin's item size limit) does not load the DynamoDB SDK.
 */
import { type Key, type Stored } from './protocol.js';
/** Names of the table's secondary indexes; infra/ creates them with the same constants. */
export declare const LedgerIndexes: {
    readonly byApprovalId: 'byApprovalId';
    readonly pendingApprovals: 'pendingApprovals';
    /**
     * The runs marked `running` (sparse: `runningRun` is set while the status is `running` and
     * removed when the run ends), so the sweeper queries instead of scanning the table.
     */
    readonly runningRuns: 'runningRuns';
};
/** The partition of the `runningRuns` index, on the run item while it runs. */
export declare const RUNNING = "RUNNING";
/** The partition of the `pendingApprovals` index, on an approval while it is pending. */
export declare const PENDING = "PENDING";
/**
 * The attributes of the item this engine puts for a record, its seal aside: what DynamoDB stores,
 * and what its 400 KB item limit counts (the local twin holds the embedded engine to it).
 */
export declare function itemAttributes(key: Key, stored: Stored): Record<string, unknown>;
