import type { AppendLog, LogReader, Span } from './append-log.js';
import { ColdStore, type ColdItem } from './cold-store.js';
import { type LineSource } from './embedded-files.js';
import { Partition } from './embedded-memory.js';
import type { LedgerIndex } from './ledger-index.js';
import type { DamagedRunOptions } from './ledger.js';
import type { LockFile } from './lock-file.js';
import type { Key } from './protocol.js';
import { type Hidden, type Item, type LogEntry, type LogHead } from './sealed-log.js';
import type { LedgerSealer } from './seal.js';
import { StorageLedger } from './storage-ledger.js';
import { type RunRecord } from '../records/ledger-records.js';
/**
 * The embedded ledger's store and its tiers: the partitions in memory (embedded-memory.ts), each
 * write appended to the log first (embedded-files.ts), and, on disk, what is let go of from memory
 * — the finished runs past `retainFinishedRuns`, the effects past `retainEffects` — noted in the
 * cold store (cold-store.ts) and read back from the log when asked for. The primitives over it are
 * embedded-ledger.ts.
 */
export declare abstract class TieredStore extends StorageLedger {
    protected readonly sealer: LedgerSealer;
    protected readonly log?: AppendLog<LogEntry> | undefined;
    protected readonly lock?: LockFile | undefined;
    protected readonly head?: LogHead | undefined;
    protected readonly partitions: Map<string, Partition>;
    /** approvalId → item key (the byApprovalId GSI). */
    protected readonly approvalsById: Map<string, Key>;
    /** The pending approvals (the pendingApprovals GSI), by `pk|sk`. */
    protected readonly pending: Map<string, Key>;
    protected closed: boolean;
    /** Finished runs whose partitions are in memory, least recently used first (`retainFinishedRuns`). */
    protected readonly finishedInMemory: Map<string, true>;
    protected retainFinishedRuns: number;
    /** Business-key effect partitions in memory, least recently used first (`retainEffects`). */
    protected readonly effectsInMemory: Map<string, true>;
    protected retainEffects: number;
    /**
     * Opened to write on disk: where the partitions let go of from memory are noted (cold-store.ts),
     * and the newest of the finished runs there (`listedFinishedRuns`), newest first, each with its
     * run record's line; `complete` while no run let go of has dropped off its end.
     */
    protected cold?: ColdStore;
    protected listed: {
        runs: ListedRun[];
        limit: number;
        complete: boolean;
    };
    /** Set when opened to read (`openToRead`): the ledger reads, and refuses writes. */
    protected readOnly: boolean;
    /** Opened to read: where the log's lines are read from (there is no AppendLog). */
    protected reader?: LogReader;
    protected onNote: (note: string) => void;
    /** The chain of the last line of the log (`''` for an empty log). */
    protected tip: string;
    protected constructor(sealer: LedgerSealer, log?: AppendLog<LogEntry> | undefined, lock?: LockFile | undefined, head?: LogHead | undefined);
    /** The lines at `spans` read back from the log, each checked (embedded-files.ts `readLines`). */
    protected readLines(spans: readonly Span[]): [string, Item, Span][];
    /** Where the log's lines are read from: the log appended to, or (opened to read) its reader. */
    protected lines(): LineSource;
    /**
     * Takes the partitions, the approval indexes and the chain's tip from an index: every partition
     * on disk only, its lines read when it is asked for, and where they are taken from the index then.
     */
    protected restore(index: LedgerIndex): void;
    /**
     * Takes the live state from a current index (opened to write): the finished runs' partitions
     * (but a run's with a pending approval) and the effects' go to the cold store, the newest of those
     * runs to the list of them; every other partition is read into memory. Brings the head up to date.
     */
    protected take(index: LedgerIndex): void;
    protected partition(pk: string): Partition | undefined;
    /** Makes `pk`'s group the most recently used of the finished runs or effects in memory; whether it is one of them. */
    protected touch(pk: string): boolean;
    protected get(key: Key): Item | undefined;
    /** Commits one write (log first, then memory). */
    protected store(key: Key, record: unknown, hidden?: Hidden): void;
    /** Puts an item in memory (its line at `span` in the log), and keeps the approval indexes and the finished runs in step with it. */
    protected set(key: Key, item: Item, span?: Span): void;
    protected finished(runId: string): boolean;
    /**
     * Drops from memory the records of the finished runs past `retainFinishedRuns` and of the effects
     * past `retainEffects` (least recently used first). Opened to write, they are let go of entirely
     * (`letGo`: noted in the cold store); opened to read, their partitions keep where their lines are.
     */
    protected evictFinished(): void;
    /**
     * Lets go of a group of partitions (a finished run's, or an effect's): noted in the cold store
     * (unless what it holds of them is still current), then dropped from memory with their approval
     * ids. A group with an item whose line is not on disk, or with a pending approval, stays.
     */
    protected letGo(group: string, pks: readonly string[]): void;
    /** Puts a run let go of in the list of the newest of them (replacing its older place), keeping the list at its limit. */
    protected list(run: ListedRun): void;
    /** Every run let go of, from the whole cold store; the list of the newest made anew from them. */
    protected listAllCold(): ListedRun[];
    /** The list of the newest runs let go of made anew from `runs` (every one of them), newest first. */
    protected listNewest(runs: ListedRun[]): void;
    /**
     * The partitions of `pk`'s group, read back from the log into memory if the group was let go of
     * (every line's seal checked, and checked to be the line the cold store noted); undefined when
     * `pk` has no partition. Its approvals are in the approval index again.
     */
    protected warm(pk: string): Partition | undefined;
    /**
     * Reads back every group the cold store holds (a prune, a compaction: they go through all), and
     * empties the store: all of it is in memory now, and what the caller removes must not come back
     * from there.
     */
    protected warmAll(): void;
    /** An empty cold store, and so no run listed from it: what is let go of next is noted afresh. */
    protected startColdAgain(): void;
    /** Compacts when the log holds more than `ratio` times the `liveBytes` of its live state (and at least `minBytes`). */
    protected compactIfLarge(liveBytes: number, threshold: {
        ratio: number;
        minBytes: number;
    }, onNote: (note: string) => void): void;
    /** Replaces the log by the live state (compaction, prune): what was let go of is read back first, or it would be lost. */
    protected rewriteLive(): void;
}
/** A run to list: its creation time, and how to read its run record. */
interface Listed {
    readonly createdAt: string;
    readonly read: () => Item | undefined;
}
/** A run partition in memory, to list. */
export declare const heldRun: ([pk, partition]: [string, Partition]) => [string, Listed];
/** A finished run let go of from memory, in the list of the newest of them: its run record's line. */
export interface ListedRun {
    readonly pk: string;
    readonly createdAt: string;
    readonly item: ColdItem;
}
/** The run records of the runs to list; one that fails its checks named to `onDamaged`, or thrown without it. */
export declare function runRecords(listed: [string, Listed][], { onDamaged }: DamagedRunOptions): RunRecord[];
export {};
