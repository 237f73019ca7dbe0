import { type DamagedRunOptions, type Ledger } from './ledger.js';
import { type ItemsStep, type Key, type PairStep, type Step, type Stored } from './protocol.js';
import { type ItemDelete, type Pruning, type RunItem } from './pruning.js';
import type { LedgerIntegrityError } from '../shared/errors.js';
import type { ApprovalRecord, RunRecord } from '../records/ledger-records.js';
type ApprovalKey = Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>;
/**
 * A storage call as the engine is about to make it, in the terms of the table both engines keep:
 * the items a read or a put touches, the partition (or index) a query reads, a scan. What a guard
 * outside the ledger checks (`StorageLedger.guardStorage`; the local twin's IAM maps each to the
 * DynamoDB action it stands for), so that the embedded engine, which makes no DynamoDB call, is
 * held to the same grants as the DynamoDB one.
 */
export type StorageCall = {
    readonly read: readonly Key[];
} | {
    readonly put: readonly Key[]; /** The records put, where the call writes records (not a blob's chunks or a task token). */
    readonly items?: readonly Stored[];
}
/** Items a multi-item write only checks, writing nothing to them (`putItems`: DynamoDB's ConditionCheck). */
 | {
    readonly check: readonly Key[];
} | {
    readonly query: {
        readonly pk: string;
    } | {
        readonly index: string;
        readonly partition: string;
    };
} | {
    readonly scan: true;
}
/** Items a prune removes (`deleteItems`, pruning.ts): one BatchWriteItem of DeleteRequests with `batch`, else a conditional DeleteItem per key. */
 | {
    readonly delete: readonly Key[];
    readonly batch?: true;
};
/**
 * The `Ledger` over a storage engine: every method is a read, a transition of protocol.ts and a
 * conditional put (or a query). An engine implements only the primitives below, the way
 * Powertools' idempotency `BasePersistenceLayer` leaves a backend its four methods.
 */
export declare abstract class StorageLedger implements Ledger, Pruning {
    /** The update of each item in progress in this instance, by `pk|sk` (see `update`). */
    private readonly updating;
    private guard?;
    /**
     * Sets the check every storage call of this instance passes first; it throws to refuse the call
     * (the call is then not made). Synchronous, so that the embedded engine's updates stay one
     * synchronous section.
     */
    guardStorage(guard: ((call: StorageCall) => void) | undefined): void;
    /** Runs the guard on a call an engine makes beyond the primitives (a prune's deletes and reads). */
    protected guarded(call: StorageCall): void;
    /** The items at `keys` (verified, strongly consistent), in order; `undefined` where there is none. */
    protected abstract read(keys: readonly Key[]): Maybe<(Stored | undefined)[]>;
    /**
     * The item at `key`, as the basis of an update: `fresh` asks for the store's, not one this
     * instance remembers from its last read or write; `likelyAbsent` (a record written once) lets an
     * engine whose reads cost a round trip guess it absent instead (a failed put then reads it).
     */
    protected abstract readForUpdate(key: Key, fresh: boolean, likelyAbsent: boolean): Maybe<Stored | undefined>;
    /**
     * Puts `item` at `key` if the item there is still `expected` (the same version; absent when
     * `expected` is undefined), or unconditionally when `expected` is `'any'`. `false` when the
     * condition failed.
     */
    protected abstract put(key: Key, item: Stored, expected: Stored | undefined | 'any'): Maybe<boolean>;
    /**
     * Writes the `item`s together, on the condition that every item is still the one read
     * (`expected`; an entry without `item` is only checked): all of them, or none — `false` when a
     * condition failed. DynamoDB: one TransactWriteItems (a Put, or a ConditionCheck, per entry).
     */
    protected abstract putItems(writes: readonly ItemWrite[]): Maybe<boolean>;
    /**
     * The items of a partition (a run's, the prune records') in sort-key order, from `fromSk` on,
     * verified: one that does not verify is named to `onDamaged` and left out, or throws without it.
     */
    protected abstract queryPartition(pk: string, fromSk?: string, onDamaged?: (error: LedgerIntegrityError) => void): Maybe<Stored[]>;
    /** Every run record (at least the newest `limit`), damaged ones named to `onDamaged`. */
    protected abstract scanRuns(limit: number, options: DamagedRunOptions): Promise<RunRecord[]>;
    /** The run records whose status is `running`, damaged ones named to `onDamaged`. */
    protected abstract queryRunning(options: DamagedRunOptions): Promise<RunRecord[]>;
    /** The key of the approval with this id (the byApprovalId index). */
    protected abstract approvalById(approvalId: string): Maybe<Key | undefined>;
    /** The pending approvals (the pendingApprovals index). */
    protected abstract queryPendingApprovals(): Promise<ApprovalRecord[]>;
    /** Stores a large value's chunks (blobKey). */
    protected abstract writeBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void>;
    /** A large value's chunks, in order (one query of its partition). */
    protected abstract readBlob(runId: string, digest: string): Promise<string[]>;
    /** Stores a task token apart from its approval (tokenKey). */
    protected abstract putTaskToken(key: ApprovalKey, taskToken: string): Maybe<void>;
    /** The task token of an approval (tokenKey). */
    protected abstract readTaskToken(key: ApprovalKey): Promise<string | undefined>;
    /**
     * The items a run owns (pruning.ts `runPartitions`: its partition, its task tokens', its
     * blobs'), in that order and each in key order, as stored (pruning.ts `RunItem`); with `first`,
     * at most that many of its own partition's and none of the others (whether the run is still
     * there). Task tokens may be given by the keys their approvals name, unread (a token is a capability).
     */
    protected abstract queryRunItems(runId: string, first?: number): Maybe<RunItem[]>;
    /** Deletes items, each on its condition (pruning.ts `ItemDelete`); which were deleted, in order. */
    protected abstract deleteItems(deletes: readonly ItemDelete[]): Maybe<boolean[]>;
    readonly listPendingApprovals: Ledger['listPendingApprovals'];
    readonly putBlob: Ledger['putBlob'];
    readonly getBlob: Ledger['getBlob'];
    readonly getTaskToken: Ledger['getTaskToken'];
    /**
     * Runs `transition` on the item at `key` and puts what it writes, on the condition that the
     * item is still the one it read; when another writer came first, it runs again on what is there
     * now. Updates of one item from this instance take turns (each starts from the last one's item):
     * concurrent writers here cost one round trip each, not a storm of failed conditions. An engine
     * whose primitives answer at once (the embedded one) runs the whole update in one synchronous
     * section: it is done when the method returns its promise.
     */
    protected update<R>(key: Key, transition: Transition<R>, likelyAbsent?: boolean): Promise<R>;
    /** Runs `work` after this instance's update of `key` in progress, if any (see `update`). */
    private inTurn;
    /**
     * `update` over several items (a tool call and its effect; a record and the run item that counts
     * it): the transition reads them all, and what it writes is written as one (`putItems`), on the
     * condition that none it writes or checks changed since it was read; when another writer came
     * first, it runs again on all of them. One item to write and none to check is a plain put.
     * Updates from this instance take turns on the last item (the one shared most widely: the effect
     * claimed across runs, the run item every step counts on).
     */
    protected updateItems<R>(keys: readonly Key[], transition: ItemsTransition<R>, options?: ItemsOptions): Promise<R>;
    private updateItemsNow;
    /** `updateItems` over a tool call and its effect. */
    protected updatePair<R>(keys: readonly [Key, Key], transition: PairTransition<R>, options?: PairOptions): Promise<R>;
    private updateNow;
    private record;
    private readGuarded;
    readonly createRun: Ledger['createRun'];
    readonly getRun: Ledger['getRun'];
    readonly listRuns: Ledger['listRuns'];
    readonly listRunningRuns: Ledger['listRunningRuns'];
    readonly attachExecution: Ledger['attachExecution'];
    readonly recordRecovery: Ledger['recordRecovery'];
    readonly finishRun: Ledger['finishRun'];
    readonly killRun: Ledger['killRun'];
    readonly getGlobalKill: Ledger['getGlobalKill'];
    readonly setGlobalKill: Ledger['setGlobalKill'];
    readonly recordFork: Ledger['recordFork'];
    readonly recordGuardEvent: Ledger['recordGuardEvent'];
    readonly countStep: Ledger['countStep'];
    readonly applyBudgetExtension: Ledger['applyBudgetExtension'];
    readonly getBreaker: Ledger['getBreaker'];
    readonly saveBreaker: Ledger['saveBreaker'];
    readonly recordTurn: Ledger['recordTurn'];
    readonly getTurn: Ledger['getTurn'];
    readonly listConversation: Ledger['listConversation'];
    readonly loadStep: Ledger['loadStep'];
    readonly getCall: Ledger['getCall'];
    readonly claimCall: Ledger['claimCall'];
    readonly recordCall: Ledger['recordCall'];
    readonly completeCall: Ledger['completeCall'];
    readonly releaseCall: Ledger['releaseCall'];
    readonly renewCall: Ledger['renewCall'];
    readonly getEffect: Ledger['getEffect'];
    readonly getAggregate: Ledger['getAggregate'];
    readonly reserveAggregate: Ledger['reserveAggregate'];
    readonly upsertApproval: Ledger['upsertApproval'];
    readonly getApproval: Ledger['getApproval'];
    readonly getBudgetApproval: Ledger['getBudgetApproval'];
    readonly findApproval: Ledger['findApproval'];
    readonly decideApproval: Ledger['decideApproval'];
    readonly recordFirstApproval: Ledger['recordFirstApproval'];
    readonly prune: Pruning['prune'];
    readonly prunes: Pruning['prunes'];
    readonly verifyPrunes: Pruning['verifyPrunes'];
    /**
     * Prunes `runIds` (their items read) under one record (pruning.ts, the procedure). Throws when
     * every one of them changed first: its record then names runs still there, which the next prune
     * prunes again under a record of its own (what `verify` reports until then).
     */
    private pruneRuns;
}
type Maybe<T> = T | Promise<T>;
/** `never`: each transition reads the record type of its own rule. */
type Transition<R> = (current: Stored<never> | undefined) => Step<R>;
type PairTransition<R> = (first: Stored<never> | undefined, second: Stored<never> | undefined) => PairStep<R>;
type ItemsTransition<R> = (currents: (Stored<never> | undefined)[]) => ItemsStep<R>;
type ItemsOptions = {
    /** Per item: a record likely absent, not read before the write (as `update`'s `likelyAbsent`). */
    readonly likelyAbsent?: readonly boolean[];
    /** The order, by index, an engine that writes the items one after the other writes them in (the embedded log's lines). @default the keys' order */
    readonly order?: readonly number[];
};
type PairOptions = {
    /** Per item: a record likely absent, not read before the write (as `update`'s `likelyAbsent`). */
    readonly likelyAbsent?: readonly [boolean, boolean];
    /** The order an engine that writes the items one after the other writes them in (the embedded log's lines). */
    readonly order?: 'first first' | 'second first';
};
/** One item of a multi-item write (`putItems`): put `item`, or (without one) only check, if the item there is still `expected`. */
export type ItemWrite = {
    readonly key: Key;
    readonly item: Stored | undefined;
    readonly expected: Stored | undefined;
};
/**
 * The ledger's retention, when it keeps prune records: both storage engines do (the embedded
 * ledger opened here, the DynamoDB one); the running engine's embedded ledger, reached over
 * loopback, does not (the engine owns it).
 */
export declare function pruningOf(ledger: Ledger): Pruning | undefined;
export {};
