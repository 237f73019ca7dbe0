import { type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DamagedRunOptions } from './ledger.js';
export { itemAttributes, LedgerIndexes } from './dynamodb-item.js';
import { type Key, type Stored } from './protocol.js';
import { type ItemDelete, type RunItem } from './pruning.js';
import { type ApprovalRecord, type RunRecord } from '../records/ledger-records.js';
import type { LedgerSealer } from './seal.js';
import { StorageLedger, type ItemWrite } from './storage-ledger.js';
import { LedgerIntegrityError } from '../shared/errors.js';
/**
 * The ledger on DynamoDB, a storage engine beneath the protocol (storage-ledger.ts). It uses
 * single-item conditional writes, but for the items a rule writes together — a tool call and its
 * business-key effect, a step's record and the run item that counts it — written in one
 * transaction (`putItems`; the local emulator serves it: local/aws/dynamodb-transactions.ts). An update
 * is a read-modify-write of the whole sealed item, conditional on the seal it read:
 *
 *   loadStep (BatchGetItem) ─► remembered as the basis ─► transition ─► PutItem IF #seal = :seal read
 *                                                                         └─ ConditionalCheckFailed: GetItem, run again
 *
 * With the basis from the step's own `loadStep`, an update is one round trip, as the UpdateItem it
 * replaces was; a record written once (a turn, a run) is put `IF attribute_not_exists(pk)` at once.
 */
export declare class DynamoDbLedger extends StorageLedger {
    private readonly tableName;
    /**
     * Seals every item written and verifies every item read (lambdas/ledger/seal.ts); on AWS a
     * function that loads the key from Secrets Manager on first use.
     */
    private readonly sealer;
    /**
     * How the ledger waits before it tries again: a prune before it sends DynamoDB's unprocessed
     * deletes again (`deleteAll`), a write that met a transaction in flight before it reads again
     * (`put`, `putItems`). @default setTimeout
     */
    private readonly sleep;
    private readonly doc;
    /**
     * The items this instance last read or wrote, verified, by `pk|sk`: the basis of its next
     * update. A stale basis (another writer came first) fails the condition: read again.
     */
    private readonly basis;
    private loadedSealer?;
    constructor(client: DynamoDBClient, tableName: string, 
    /**
     * Seals every item written and verifies every item read (lambdas/ledger/seal.ts); on AWS a
     * function that loads the key from Secrets Manager on first use.
     */
    sealer: LedgerSealer | (() => Promise<LedgerSealer>), 
    /**
     * How the ledger waits before it tries again: a prune before it sends DynamoDB's unprocessed
     * deletes again (`deleteAll`), a write that met a transaction in flight before it reads again
     * (`put`, `putItems`). @default setTimeout
     */
    sleep?: (ms: number) => Promise<void>);
    protected read(keys: readonly Key[]): Promise<(Stored | undefined)[]>;
    protected readForUpdate(key: Key, fresh: boolean, likelyAbsent: boolean): Promise<Stored | undefined>;
    protected put(key: Key, stored: Stored, expected: Stored | undefined | 'any'): Promise<boolean>;
    /**
     * One TransactWriteItems: a Put per item written, a ConditionCheck per item only read, each on
     * the seal read (or the item's absence). Cancelled as a whole when a condition failed
     * (`ConditionalCheckFailed` among its CancellationReasons) or it met another transaction on
     * one of its items (`TransactionConflict`): both mean "read again" (a conflict after a short
     * wait, `conflictWait`). IAM: dynamodb:PutItem and
     * dynamodb:ConditionCheckItem on the table (infra/ledger-table.ts).
     */
    protected putItems(writes: readonly ItemWrite[]): Promise<boolean>;
    /** The item as stored: its attributes (dynamodb-item.ts) and its seal. */
    private sealed;
    protected queryPartition(pk: string, fromSk?: string, onDamaged?: (error: LedgerIntegrityError) => void): Promise<Stored[]>;
    protected scanRuns(limit: number, options: DamagedRunOptions): Promise<RunRecord[]>;
    protected queryRunning(options: DamagedRunOptions): Promise<RunRecord[]>;
    protected approvalById(approvalId: string): Promise<Key | undefined>;
    protected queryPendingApprovals(): Promise<ApprovalRecord[]>;
    /**
     * A plain put, outside the seal: the token is a capability Step Functions issues and checks
     * itself (a forged one wakes nothing), and its own partition lets IAM keep it from every role
     * but the approval functions' (dynamodb:LeadingKeys, infra/ledger-table.ts).
     */
    protected putTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>, taskToken: string): Promise<void>;
    protected readTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<string | undefined>;
    protected writeBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void>;
    protected readBlob(runId: string, digest: string): Promise<string[]>;
    /**
     * A run's items in key order, its own partitions' (keys and seals only: `partitionKeys`), then
     * its task tokens' keys, as its approvals give them: a token is a capability, only the approval
     * functions read one (and the operator's grant does not: infra/ledger-table.ts), so a prune
     * deletes it by its key, unread, and its digest covers the key alone.
     */
    protected queryRunItems(runId: string, first?: number): Promise<RunItem[]>;
    /**
     * A conditional DeleteItem per delete with a condition (IF #seal = :seal read), in order; the
     * others with BatchWriteItem (`deleteAll`).
     */
    protected deleteItems(deletes: readonly ItemDelete[]): Promise<boolean[]>;
    /** The keys and seals of a partition's items (and what `writeKeyOf` reads), at most `limit` of them. */
    private partitionKeys;
    /** DeleteItem IF the seal is still `seal`; false when the item changed (or is gone). */
    private deleteIfUnchanged;
    /**
     * Deletes `keys` with BatchWriteItem, by DynamoDB's rules for it
     * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html): at
     * most 25 requests and 16 MB a call — keys only here, at most 2 KB + 1 KB each, so 25 of them are
     * far under 16 MB — and what it leaves in `UnprocessedItems` (throttled, not failed) is sent
     * again, with exponential backoff as the reference asks. No condition can be given to a
     * BatchWriteItem delete: only what nothing writes to any more is deleted this way (pruning.ts).
     * IAM: `dynamodb:BatchWriteItem`, every key's pk as `dynamodb:LeadingKeys`.
     */
    private deleteAll;
    /** A listed run's item once verified; a damaged one goes to `onDamaged` (undefined) when it is given. */
    private trusted;
    /** The item, once its seal is verified (a LedgerIntegrityError naming the record otherwise). */
    private verified;
    private seals;
    /** Keeps a copy (a caller may change the records it is handed) as the basis of the next update. */
    private remember;
    private queryAll;
}
