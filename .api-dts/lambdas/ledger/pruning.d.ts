import { type Key, type Stored } from './protocol.js';
import { type RunRecord, type RunStatus } from '../records/ledger-records.js';
/**
 * Retention (`savepoint prune`), once for both engines, in protocol.ts's shape: each rule a pure
 * function of the records it reads, the conditions of its writes named where they are written.
 * The engines beneath give it two primitives more than the protocol's (storage-ledger.ts:
 * `queryRunItems`, the items a run owns as stored; `deleteItems`, each on its condition), and
 * storage-ledger.ts runs the procedure:
 *
 *   prunes ─► the newest record's runs, what is left of them where the run record is gone: deleted (leftOfPrune)
 *   listRuns ─► pruneVerdict each (pending approvals: one index query, when a run may qualify) ─► prunableRuns
 *   per group of runs (pruneGroupFull: RUNS_PER_PRUNE_RECORD runs, WRITES_BYTES_PER_PRUNE_RECORD of write keys):
 *     queryRunItems each ─► pruneRecordOf ─► put the sealed record      IF_NO_PRUNE_RECORD (absent)
 *     ─► deleteItems: each run record                                   IF_RUN_UNCHANGED (the basis read)
 *          └─ refused: the run changed since it was read (a fork was recorded on it): it is kept, and
 *             the record put again without it                           IF_RECORD_UNCHANGED (the record put)
 *     ─► deleteItems: the rest of the runs' items                       unconditionally (nothing writes to a run once its record is gone)
 *
 * The record comes first, so no run is ever gone without one. A prune that stops half-way leaves a
 * run the record names with items still in the ledger: `verifyPrunes` reports it (pruneRecordProblems),
 * and the next prune finishes it — deleting what is left where the run record is gone, or pruning
 * the run again under a record of its own where it is not.
 */
/**
 * What `prune` removed, kept in the ledger as a sealed record of its own (partition `PRUNED`), so
 * that `savepoint verify` can tell a pruned run from a lost one: the run ids, how many records
 * they held, and the sha256 of those records in key order (what a kept copy can be checked against).
 */
export interface PruneRecord {
    kind: 'prune';
    prunedAt: string;
    /** Runs that finished (succeeded, stopped or killed) before this instant were pruned. */
    finishedBefore: string;
    runIds: string[];
    /** Records removed: the runs' own, their task tokens and blobs. */
    records: number;
    digest: string;
    /**
     * The idempotency key of each side-effecting call the runs claimed, sorted (`writeKeyOf`): what
     * they may have done to the outside world, kept after their calls are gone, so that a provider's
     * record made under one of them is still known to the ledger (local/runtime/world-facts.ts). Absent when none.
     */
    writes?: string[];
}
/** The idempotency key of a record that is a side-effecting tool call (what a PruneRecord's `writes` lists); undefined otherwise. */
export declare function writeKeyOf(record: Record<string, unknown>): string | undefined;
/** The partition of the prune records; `index` tells two prunes of one instant apart. */
export declare const pruneKey: (prunedAt: string, index: number) => Key;
export declare const PRUNED_PK: string;
/** The partitions a run owns (records.ts, blobKey): what a prune removes. Business-key effects (EFFECT#…) are not a run's: they guard across runs. */
export declare const runPartitions: (runId: string) => string[];
/** The statuses of a run that is over: a `failed` run is not (it can be resumed). */
export declare const FINISHED_STATUSES: ReadonlySet<RunStatus>;
/** What a run still holds that a prune must not take away (the facts `pruneVerdict` reads besides the run). */
export interface PruneFacts {
    /** Approvals of the run still pending (the pendingApprovals index): a person may yet decide one. */
    readonly pendingApprovals: number;
    /** The status of each of the run's forks (`run.forks`) still in the ledger; absent: pruned or never finished copying. */
    readonly forkStatus: (runId: string) => RunStatus | undefined;
}
export type PruneVerdict = {
    prune: true;
} | {
    prune: false;
    reason: string;
};
/**
 * Whether a run's records may be removed by `prune --finished-before`, the one rule both engines
 * apply: it finished (succeeded, stopped, killed) before the cutoff; no approval of it is still
 * pending; and no fork of it is live (running, or failed and resumable) — a `reuse` fork answers its
 * writes from the parent's records, a `dry` one its reads, for as long as it runs.
 */
export declare function pruneVerdict(run: RunRecord, finishedBefore: Date, facts: PruneFacts): PruneVerdict;
/**
 * Problems with one prune record (none: `[]`), whichever engine holds it: its seal is checked when
 * it is read; here, it must agree with itself and with the ledger. `present`: the runs it names
 * that still have records in the ledger (a run that came back under a pruned id, or a prune that
 * stopped half-way: `savepoint prune` again finishes it).
 */
export declare function pruneRecordProblems(prune: PruneRecord, present: readonly string[]): string[];
/** Runs named by one prune record: it stays a small item (DynamoDB's 400 KB is the bound), whatever a prune removes. */
export declare const RUNS_PER_PRUNE_RECORD = 500;
/** Bytes of write keys (PruneRecord `writes`) one prune record holds at most, besides a single run's own. */
export declare const WRITES_BYTES_PER_PRUNE_RECORD: number;
/**
 * An item a run owns, as its engine stores it (`queryRunItems`): its key, the engine's mark of
 * the version read (what a conditional delete compares), `digest` — the item as the engine holds
 * it, what a prune record's digest covers (the embedded log's line; DynamoDB's key and seal) — and
 * the idempotency key of a side-effecting call (writeKeyOf).
 */
export interface RunItem {
    readonly key: Key;
    readonly basis: unknown;
    readonly digest: string;
    readonly writeKey?: string;
}
/** One delete of `deleteItems`: of the item at `key` if it is still the version `expected` read (its basis), or, without it, whatever it is. */
export interface ItemDelete {
    readonly key: Key;
    readonly expected?: {
        readonly basis: unknown;
    };
}
/**
 * The runs a prune removes, sorted: those `pruneVerdict` lets go. `pending`: each run's pending
 * approvals, when they were asked for (`undefined`: not yet, counted as none — `wantsPending` says
 * whether to ask).
 */
export declare function prunableRuns(runs: readonly RunRecord[], finishedBefore: Date, pending?: ReadonlyMap<string, number>): string[];
/** Whether a prune needs the pending approvals: only when a run may go (as if none were pending). */
export declare const wantsPending: (runs: readonly RunRecord[], finishedBefore: Date) => boolean;
/** The pending approvals counted by run. */
export declare function pendingByRun(approvals: readonly {
    runId: string;
}[]): Map<string, number>;
/** Bytes of write keys a run's items add to a prune record. */
export declare const writeBytes: (items: readonly RunItem[]) => number;
/** Whether a group of runs (`runs` of them, `bytes` of write keys) is full before a run of `bytes` more joins it: its record stays a small item. */
export declare const pruneGroupFull: (group: {
    runs: number;
    bytes: number;
}, bytes: number) => boolean;
/** The record of a prune of `runIds` (sorted), from their items as stored: how many, their digest in key order, their write keys. */
export declare function pruneRecordOf(runIds: readonly string[], items: ReadonlyMap<string, readonly RunItem[]>, finishedBefore: Date, now: Date): PruneRecord;
/** A prune record as the item it is put as. */
export declare const pruneItem: (record: PruneRecord) => Stored;
/** The condition of a prune record's first put: none at its key yet (two prunes at one instant would meet here). */
export declare const IF_NO_PRUNE_RECORD: undefined;
/** Each run record deleted on the condition that it is the one read (IF_RUN_UNCHANGED): a run that changed since (a fork recorded on it) stays. */
export declare function runRecordDeletes(runIds: readonly string[], items: ReadonlyMap<string, readonly RunItem[]>): {
    runId: string;
    delete: ItemDelete;
}[];
/** The rest of the pruned runs' items, deleted unconditionally: nothing writes to a run once its record is gone. */
export declare function restDeletes(pruned: readonly string[], items: ReadonlyMap<string, readonly RunItem[]>): ItemDelete[];
/** What is left of a run a prune record names (`left`: its items now), to delete: all of it when its run record is gone (a prune that stopped half-way), else nothing (the run is there: a prune of its own takes it). */
export declare function leftOfPrune(runId: string, left: readonly RunItem[]): ItemDelete[];
/** The prune records, oldest first (by the instant of each; the key order among those of one instant). */
export declare function oldestFirst(records: PruneRecord[]): PruneRecord[];
/** What `savepoint prune` and `verify` use of a ledger that keeps prune records (storage-ledger.ts `pruningOf`): the same on both engines. */
export interface Pruning {
    /**
     * Removes the records of every run `pruneVerdict` lets go — its run, turns, calls and approvals,
     * its task tokens and blobs — under sealed PruneRecords naming them (the procedure at the top).
     * Business-key effects (EFFECT#…) are kept: they keep a refund a pruned run paid from being paid
     * again. The records written, oldest first; none when no run qualified (nothing is written then).
     */
    prune(finishedBefore: Date, now: Date): Promise<PruneRecord[]>;
    /** The prune records, oldest first, each verified: one that does not verify throws, or, with `onDamaged`, is named to it and left out. */
    prunes(onDamaged?: (error: Error) => void): Promise<PruneRecord[]>;
    /** Problems with the prune records (none: `[]`): one that does not verify, named; one that disagrees with itself or the ledger (`pruneRecordProblems`). */
    verifyPrunes(): Promise<string[]>;
}
