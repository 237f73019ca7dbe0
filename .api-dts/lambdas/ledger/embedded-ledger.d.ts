import { TieredStore } from './embedded-tiers.js';
import { type RefreshOptions } from './ledger-index.js';
import type { DamagedRunOptions } from './ledger.js';
import { type Key, type Stored } from './protocol.js';
import { type ItemDelete, type RunItem } from './pruning.js';
import { type LedgerSealer } from './seal.js';
import type { ItemWrite } from './storage-ledger.js';
import { type ApprovalRecord, type RunRecord } from '../records/ledger-records.js';
export interface EmbeddedLedgerOptions {
    /** Directory the ledger persists to (created if needed; one process at a time). @default in memory */
    readonly dir?: string;
    /** fdatasync after every write, to survive an OS crash too (see `AppendLogOptions.fsync`). @default false */
    readonly fsync?: boolean;
    /**
     * Compact on open when the log holds more than `ratio` times the bytes of the live state, and at
     * least `minBytes`. @default { ratio: 4, minBytes: 1 MiB }
     */
    readonly compaction?: {
        readonly ratio: number;
        readonly minBytes: number;
    };
    /** Notes on what opening did (a torn line dropped, a stale lock taken over, a compaction). @default console.warn */
    readonly onNote?: (note: string) => void;
    /**
     * Seals every item and the log's chain (lambdas/ledger/seal.ts). @default in memory: a random
     * key; on disk: the key file `keys/ledger-seal.key` in `dir` (made on first use)
     */
    readonly sealer?: LedgerSealer;
    /**
     * Finished runs (succeeded, stopped, killed) whose records stay in memory, the most recently
     * used; the others' records are read back from the log when asked for. Opened to write, nothing
     * of the others stays in memory (they are noted in `ledger.cold/`, and the newest of them listed:
     * `listedFinishedRuns`); opened to read, where their lines are. What keeps an engine that runs
     * for months flat in the runs it finished. On disk only: in memory, the Map is the store. At
     * least 1. @default 16
     */
    readonly retainFinishedRuns?: number;
    /**
     * Business-key effects (EFFECT#…, one per effect a tool keyed by its arguments made) whose
     * records stay in memory, the most recently used; the others are read back from the log when a
     * claim asks for them (lambdas/ledger/cold-store.ts). On disk, opened to write only. At least 1.
     * @default 64
     */
    readonly retainEffects?: number;
    /**
     * How many of the finished runs let go of from memory keep their place in a list of the newest
     * (by creation time), so that listing the newest runs (the watchdog's sweep, `savepoint runs`)
     * reads their run records without going through `ledger.cold/`. A fixed number, not one per
     * run. On disk, opened to write only. At least 1. @default 100
     */
    readonly listedFinishedRuns?: number;
}
/**
 * The ledger in this process, a storage engine beneath the protocol (storage-ledger.ts): the same
 * items and keys as the DynamoDB ledger, kept in a Map per partition, optionally persisted to an
 * append-only log (sealed-log.ts).
 *
 * A conditional put is one synchronous section, with no `await` between checking that the item
 * is still the one read and replacing it:
 *
 *   check the item is still the one read ─► append the new item to the log (disk) ─► replace it in the Map
 *
 * Node runs one synchronous section at a time, so in one process each put is atomic like a
 * single-item conditional write: of 50 concurrent claims, the first wins and the other 49 find
 * its record. The log is appended before the Map changes, so what a caller saw acknowledged is on
 * disk, and a write that failed to reach the disk changed nothing.
 *
 * Records are opaque: stored as given (as JSON), read back as copies. Here, the primitives; the store
 * and its tiers are embedded-tiers.ts, the files embedded-files.ts, the in-memory form embedded-memory.ts.
 */
export declare class EmbeddedLedger extends TieredStore {
    /**
     * Opens the ledger in memory, or on disk in `options.dir`. On disk, every line of the log is
     * streamed once, its chain checked (and the whole against the head: a damaged log is refused,
     * naming the line, before anything is read from it), and the sealed index (ledger-index.ts) is
     * brought up to date; the records themselves are read from the index, not parsed from every
     * line: the records of the runs still going (and the other live partitions) are read into
     * memory, each line checked against the index's hash and its seal, and the finished runs and the
     * business-key effects are noted in the cold store (cold-store.ts), read back when asked for. So
     * what an open keeps does not grow with the runs the log holds; it may compact the log.
     */
    static open(options?: EmbeddedLedgerOptions): EmbeddedLedger;
    /**
     * Opens the ledger in `options.dir` to read: what `savepoint status`, `runs`, `approvals`,
     * `verify` and the console need, in time and memory that do not grow with the runs the log
     * holds. It reads the sealed index beside the log (ledger-index.ts) and the lines written after
     * it (each chain-checked, and the whole against the head), and no other line until a record is
     * asked for: then the partition's lines are read, each checked against the index's hash of it
     * and its seal. With `verify`, every line of the log is streamed first, its chain and seal
     * checked, keeping nothing (`savepoint verify`). Writes are refused: the ledger is
     * read-only, and the lock is held until `close` so that no engine rewrites the log meanwhile.
     */
    static openToRead(options: Omit<EmbeddedLedgerOptions, 'compaction' | 'fsync'> & {
        dir: string;
    } & RefreshOptions): EmbeddedLedger;
    /** Closes the log and releases the directory; the ledger cannot be used afterwards. */
    close(): void;
    protected read(keys: readonly Key[]): (Stored | undefined)[];
    protected readForUpdate(key: Key): Stored | undefined;
    protected put(key: Key, item: Stored, expected: Stored | undefined | 'any'): boolean;
    protected putItems(writes: readonly ItemWrite[]): boolean;
    private storeItem;
    protected queryPartition(pk: string, fromSk?: string): Stored[];
    protected scanRuns(limit: number, options: DamagedRunOptions): Promise<RunRecord[]>;
    protected queryRunning(options: DamagedRunOptions): Promise<RunRecord[]>;
    protected approvalById(approvalId: string): Key | undefined;
    protected queryPendingApprovals(): Promise<ApprovalRecord[]>;
    protected putTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>, taskToken: string): void;
    protected readTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<string | undefined>;
    protected writeBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void>;
    protected readBlob(runId: string, digest: string): Promise<string[]>;
    protected queryRunItems(runId: string, first?: number): RunItem[];
    protected deleteItems(deletes: readonly ItemDelete[]): boolean[];
}
