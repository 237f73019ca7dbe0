import type { BreakerState } from '../records/breaker-state.js';
import type { ApprovalDecision, AttachOptions, EffectHolder, EffectOutcome, StepCount } from './ledger.js';
import { type ApprovalRecord, type Counters, type EffectRecord, type ExtendableGuard, type GuardEvent, type KillFlag, type RecoveryRecord, type RunRecord, type RunStatus, type ToolCallRecord, type ToolOutcome, type TurnRecord } from '../records/ledger-records.js';
/**
 * The ledger's protocol, once: every rule that guards work is a pure transition here, from the one
 * item it reads to the item it writes (or to an answer without a write, or to a refusal). The
 * storage engines beneath (embedded-ledger.ts, dynamodb-ledger.ts) only read items, put an item on
 * the condition that it is still the one read, and query; storage-ledger.ts runs a transition:
 *
 *   read item ─► transition(current) ─► keep: answer, nothing written
 *                                    ─► fail: throw the refusal
 *                                    ─► write: put(next, IF_UNCHANGED current) ─► answer
 *                                                 └─ condition failed (another writer came first): read again
 *
 * The condition of every write is the same one, whatever the rule: the item is still the one the
 * transition read (absent, or the same seal). So each rule's own condition — "no record yet", "in
 * flight with an expired lease", "still pending", "the version read" — is checked by its
 * transition on the item read, and holds at the put because the item did not change in between.
 *
 * A side-effecting tool call, when the Lambda dies mid-call:
 *
 *   attempt 1: claimCall (in_flight, lease L) ─► provider POST, Idempotency-Key K ─► ✗ crash
 *   attempt 2: claimCall refused while the lease is live ─► Agent.LeaseHeld ─► Retry waits
 *   attempt 3: lease expired ─► claimCall takes over ─► provider POST with the same K
 *              ─► provider answers with the first refund ─► completeCall records it
 */
export type Key = {
    pk: string;
    sk: string;
};
/**
 * An item as the protocol sees it: the record (what callers get back) and the storage attributes
 * kept beside it, never returned. The engine encodes both (and seals them, seal.ts); the index
 * attributes (DynamoDB's sparse `pendingApproval`, `runningRun`) follow from the record's status.
 */
export interface Stored<T = Record<string, unknown>> {
    readonly record: T;
    readonly meta: Meta;
    /** The engine's mark of the version read (a seal, an in-memory item): what its conditional put compares. */
    readonly basis?: unknown;
}
export interface Meta {
    /** The newest step keys counted into a run's counters, oldest first (countStep): a retried step is counted once. */
    countedSteps?: string[];
    /** Reasons of the guard events recorded on a run: a warning repeated every turn is recorded once. */
    guardReasons?: string[];
    /** DynamoDB TTL (epoch seconds); the embedded ledger keeps no TTL. */
    expiresAt?: number;
}
/** What a transition decides. */
export type Step<R> = {
    keep: R;
} | {
    write: Stored;
    answer: R;
} | {
    fail: Error;
};
/** The error a failed condition raises: the name DynamoDB gives ConditionalCheckFailedException, on every engine. */
export declare class ConditionalWriteError extends Error {
    readonly name = "ConditionalCheckFailedException";
    constructor(what: string);
}
/** Ledger records expire (DynamoDB TTL on `expiresAt`, epoch seconds) this long after they are written. */
export declare const RETENTION_SECONDS: number;
export declare const expiresAt: (now: Date) => number;
export declare const GLOBAL_KILL: Key;
export declare const breakerKey: (name: string) => Key;
export declare const turnKey: (runId: string, turn: number) => Key;
export declare const callKey: (runId: string, turn: number, call: number) => Key;
export declare const approvalKey: (approval: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>) => Key;
/** An effect claimed across an agent's runs by its business key (EffectRecord). */
export declare const effectKey: (key: string) => Key;
export declare const aggregateKey: (key: string) => Key;
/** A chunk of a large value: `BLOB#<runId>` / `<digest>#<index>` (sorts in chunk order). */
export declare const blobKey: (runId: string, digest: string, index: number) => Key;
export type Current<T> = Stored<T> | undefined;
export declare const keep: <R>(answer: R) => Step<R>;
export declare const write: <T, R>(record: T, meta: Meta, answer: R) => Step<R>;
/** A run is created once: a second start with the same id finds it (and resumes it). */
export declare function createRun(current: Current<RunRecord>, run: RunRecord, now: Date): Step<boolean>;
/**
 * Two executions resuming the same run at once: only the first to replace the dead one drives it
 * (`previousArn`); without it, any execution takes the run over.
 */
export declare function attachExecution(current: Current<RunRecord>, runId: string, executionArn: string, now: Date, options: AttachOptions): Step<RunRecord | undefined>;
/**
 * The run's recovery record is its own lock: a second delivery of the same ended execution, or a
 * racing recovery, finds another key than the one it read.
 */
export declare function recordRecovery(current: Current<RunRecord>, recovery: RecoveryRecord, expected: {
    executionArn: string;
    previousKey?: string;
}): Step<boolean>;
export type RunOutcome = {
    status: Exclude<RunStatus, 'running'>;
    stopReason?: string;
    error?: {
        error: string;
        cause: string;
    };
};
export declare function finishRun(current: Current<RunRecord>, runId: string, outcome: RunOutcome, now: Date): Step<RunRecord>;
/** The first kill stands; `false` when there is no such run. */
export declare function killRun(current: Current<RunRecord>, flag: KillFlag): Step<boolean>;
export declare function setGlobalKill(flag: KillFlag | undefined): Stored;
/**
 * A fork of the run, appended once to the parent's record: with the fork's own `forkedFrom`, the
 * lineage is sealed in both runs' records. `false` when there is no such parent.
 */
export declare function recordFork(current: Current<RunRecord>, fork: {
    runId: string;
    turn: number;
}): Step<boolean>;
/** Once per distinct reason: a warning repeated on every turn does not fill the record. */
export declare function recordGuardEvent(current: Current<RunRecord>, event: GuardEvent): Step<void>;
/**
 * The counted step keys a run item keeps: the newest, in the order they were counted. Enough for
 * exactly-once because a run's steps are sequential — one execution drives a run, and a step is
 * retried (by the state machine, or by the execution that resumes a dead one) before the run goes
 * on — so between a step's count and its retry nothing else is counted but the approval waits of
 * its turn and its turn's other tool calls. Keeping them all grew the item by one key a step: write
 * units rose with the run's length (quadratic over a run) and a run failed every write past
 * ~40,000 steps (DynamoDB's 400 KB item), RecordFailure included (issue 20 item 7).
 */
export declare const COUNTED_STEPS_KEPT = 64;
/**
 * The counted step keys make the count idempotent: a retried step that was counted already changes
 * nothing. The counters are monotone sums; the keys kept are the last COUNTED_STEPS_KEPT.
 *
 *   countStep(turn:7) ─► turn:7 not in the window ─► counters += deltas, window = […, turn:7] (oldest dropped)
 *   retry     turn:7 ─► turn:7 in the window     ─► nothing written
 */
export declare function countStep(current: Current<RunRecord>, stepKey: string, deltas: Partial<Counters>): Step<boolean>;
/** Only a later extension of this budget applies: a repeated or stale one changes nothing. */
export declare function applyBudgetExtension(current: Current<RunRecord>, runId: string, guard: ExtendableGuard, extension: number, limit: number): Step<RunRecord>;
/** Optimistic: the version read must still be there (version 1 may also create the breaker). */
export declare function saveBreaker(current: Current<BreakerState>, next: BreakerState): Step<boolean>;
/** A breaker as read: the record without its `kind`. */
export declare function breakerOf(record: Record<string, unknown> | undefined): BreakerState | undefined;
/** A turn is written once; a retried CallModel gets the first one back. */
export declare function recordTurn(current: Current<TurnRecord>, turn: TurnRecord, now: Date): Step<TurnRecord>;
/**
 * When an in-flight claim may be taken over: after its lease (the holder died, or released it),
 * and for a tool that reconciles, not before `settleMs` from when its request was sent (`sentAt`):
 * the provider shows a request only `settleMs` after receiving it, so a `reconcile` asked sooner
 * could miss it. One rule on every engine, on the run's clock. A record without `sentAt` waits
 * `settleMs` past its lease.
 *
 *   sent (sentAt) ─ ✗ ─ lease ends ─┬─ settleMs from sentAt ─┐ (the later of the two)
 *   refused meanwhile (Agent.LeaseHeld / Agent.SettleWait) ─── takeover ─ reconcile ─ record, send or escalate
 */
export declare function takeoverAfter(record: Pick<ToolCallRecord, 'leaseUntil' | 'settleMs' | 'sentAt'>): string;
/** Claimable: there is no record, or it is in flight and past `takeoverAfter` (its holder died, or failed without knowing). */
export declare function claimable(current: Current<ToolCallRecord>, now: Date): boolean;
export type Claim = {
    claimed: true;
    record: ToolCallRecord;
} | {
    claimed: false;
    existing: ToolCallRecord;
};
export type Recorded = {
    recorded: true;
    record: ToolCallRecord;
} | {
    recorded: false;
    existing: ToolCallRecord;
};
export declare function claimCall(current: Current<ToolCallRecord>, call: ToolCallRecord, now: Date): Step<Claim>;
/** A call that needs no claim (a read) and its outcome, in one write, where a claim would succeed. */
export declare function recordCall(current: Current<ToolCallRecord>, call: ToolCallRecord & {
    status: 'completed';
}, now: Date): Step<Recorded>;
export type CallOutcome = {
    outcome: ToolOutcome;
    result: string;
    latencyMs: number;
};
/** Only an in-flight record can be completed: a second completion is refused, the first outcome stands. */
export declare function completeCall(current: Current<ToolCallRecord>, key: Key, runId: string, outcome: CallOutcome, now: Date): Step<ToolCallRecord>;
/**
 * Ends the lease of an in-flight call (its attempt failed): the retry claims it at once, or after
 * the settle time. `unsent`: the attempt sent nothing that took effect (refused, never sent, its
 * reconcile failed): the send of unknown outcome is the earlier one (`earlierSend`), if any.
 */
export declare function releaseCall(current: Current<ToolCallRecord>, now: Date, unsent?: boolean): Step<void>;
/**
 * The live holder of a claim keeps its lease while its outside call runs: the same attempt (no
 * other has claimed since), still in flight on a live lease, pushes `leaseUntil` on. A lease that
 * ended (released, or run out) is not revived, and a holder that died stops renewing.
 */
export declare function renewCall(current: Current<ToolCallRecord>, attempts: number, now: Date, leaseUntil: Date): Step<boolean>;
/**
 * A tool that names its effect by a business key (`defineTool({ idempotencyKey })`, e.g. a refund
 * request id) has it claimed once across all the agent's runs, beside each run's own call record:
 *
 *   run A: claimCall ─► claimEffect(K) ─► provider POST, Idempotency-Key K ─► completeEffect ─► completeCall
 *   run B: claimCall ─► claimEffect(K) finds A's claim:
 *            completed                  ─► A's recorded result is B's, nothing sent
 *            in flight, A's lease live  ─► refused (Agent.LeaseHeld: B waits; never sends)
 *            in flight, A's lease over  ─► B takes it over (after settleMs) and reconciles, or
 *                                          re-sends A's arguments under K (the provider replays)
 *            released                   ─► not a claim (A's call ended without the effect:
 *                                          refused by the provider, rejected by a person)
 *
 * A call of the same effect in the same run (two identical calls in one turn) meets the same
 * rules: one effect. The holding call itself (its retry, after a crash) claims it again.
 */
export type EffectClaim = {
    claimed: true;
    record: EffectRecord;
} | {
    claimed: false;
    existing: EffectRecord;
};
export declare function claimEffect(current: Current<EffectRecord>, holder: EffectHolder, now: Date): Step<EffectClaim>;
/**
 * The outcome of a claimed effect. `ok`, or `unknown` (it may have happened: a person decides):
 * completed, and every later claim gets this result. Any other outcome (the provider refused it,
 * a person rejected it) releases the claim: no effect took place. A completed effect keeps its
 * first outcome; only the holder releases its claim.
 */
export declare function completeEffect(current: Current<EffectRecord>, holder: Pick<EffectRecord, 'key' | 'runId' | 'turn' | 'call'>, outcome: EffectOutcome, now: Date): Step<EffectRecord>;
/** The holder's live claim keeps its lease while its outside call runs (as `renewCall`): the same attempt, a lease not yet ended. */
export declare function renewEffect(current: Current<EffectRecord>, holder: Pick<EffectRecord, 'runId' | 'turn' | 'call'>, attempts: number, now: Date, leaseUntil: Date): Step<boolean>;
/** Ends the holder's lease (its attempt failed), as `releaseCall`. */
export declare function releaseEffect(current: Current<EffectRecord>, holder: Pick<EffectRecord, 'runId' | 'turn' | 'call'>, now: Date, unsent?: boolean): Step<void>;
/**
 * What a rule over several items decides: per item, in the order of their keys, the item it
 * writes, `undefined` for an item kept as read — checked, not written — or `null` for one left
 * out of the write (neither written nor checked), all written together on the condition that
 * every item written or checked is still the one read (storage-ledger.ts `updateItems`), or none.
 */
export type ItemsStep<R> = {
    keep: R;
} | {
    writes: readonly (Stored | undefined | null)[];
    answer: R;
} | {
    fail: Error;
};
/** What a rule over two items decides (ItemsStep): an item kept is checked. */
export type PairStep<R> = {
    keep: R;
} | {
    writes: readonly [Stored | undefined, Stored | undefined];
    answer: R;
} | {
    fail: Error;
};
/** A call claimed with its effect: both, or the record in the way — the call's own, or the effect's held elsewhere. */
export type CallEffectClaim = {
    claimed: true;
    record: ToolCallRecord;
    effect: EffectRecord;
} | {
    claimed: false;
    existing: ToolCallRecord;
}
/** Completed (its result is this call's) or in flight in a live call: nothing written. */
 | {
    claimed: false;
    effect: EffectRecord;
};
/**
 * `claimCall` and `claimEffect` in one write: the call's claim and its effect's, each by its own
 * rule, or neither. One round trip where there were two, and no call left claimed (to be
 * released again) when its effect is held elsewhere:
 *
 *   call not claimable ─► the call's record (completed: its result; in flight: Agent.LeaseHeld)
 *   call claimable ─► effect completed, or in flight in a live call ─► the effect's record, nothing written
 *                  ─► effect claimable (none, released, its lease and settle time over, this call's own) ─► both written
 */
export declare function claimCallEffect(call: Current<ToolCallRecord>, effect: Current<EffectRecord>, entry: ToolCallRecord, holder: EffectHolder, now: Date): PairStep<CallEffectClaim>;
type EffectOf = Pick<EffectRecord, 'key' | 'runId' | 'turn' | 'call'>;
/** `completeEffect` and `completeCall` in one write: the call's outcome recorded, its effect completed (or released) by the same outcome. */
export declare function completeCallEffect(call: Current<ToolCallRecord>, effect: Current<EffectRecord>, key: Key, holder: EffectOf, outcome: EffectOutcome, now: Date): PairStep<ToolCallRecord>;
/** `releaseCall` and `releaseEffect` in one write: the retry claims both again (the effect after its settle time). */
export declare function releaseCallEffect(call: Current<ToolCallRecord>, effect: Current<EffectRecord>, holder: EffectOf, now: Date, unsent?: boolean): PairStep<void>;
/** `renewCall` and `renewEffect` in one write; `true` when the call's lease was renewed (its effect's with it, while the same attempt holds it). */
export declare function renewCallEffect(call: Current<ToolCallRecord>, effect: Current<EffectRecord>, holder: EffectOf & {
    attempts: number;
}, attempts: number, now: Date, leaseUntil: Date): PairStep<boolean>;
/**
 * A rule's write with the count of the step it records (`countStep` on the run item, which comes
 * last), as one write: one round trip where there were two, and no record left uncounted by a
 * crash between them.
 *
 *   rule keeps (a record there already) or refuses ─► the same, nothing counted: a step found
 *                                                      recorded is counted by countStep on its own
 *   rule writes ─► step not counted yet ─► both written
 *               ─► counted already      ─► the rule's items alone (the run item left out: neither
 *                                          written nor checked — a count never goes back)
 *
 * The count rides only on the write that records the step's outcome, so a step is counted only
 * once its record is complete, as when countStep came after the record: the budget checks that
 * refuse a step before its work are made before this write, as before.
 */
export declare function withCount<R>(step: Step<R> | ItemsStep<R>, run: Current<RunRecord>, count: StepCount): ItemsStep<R>;
/** `recordCall` and its step's count in one write (withCount). */
export declare function recordCallCounted(call: Current<ToolCallRecord>, run: Current<RunRecord>, entry: ToolCallRecord & {
    status: 'completed';
}, now: Date, count: StepCount): ItemsStep<Recorded>;
/** `completeCall` — with the effect it holds, `completeCallEffect` — and its step's count in one write (withCount). */
export declare function completeCallCounted(call: Current<ToolCallRecord>, effect: {
    current: Current<EffectRecord>;
    holder: EffectOf;
} | undefined, run: Current<RunRecord>, key: Key, runId: string, outcome: EffectOutcome, now: Date, count: StepCount): ItemsStep<ToolCallRecord>;
/** `recordTurn` and its step's count in one write (withCount); `count` is the count of the turn it records. */
export declare function recordTurnCounted(current: Current<TurnRecord>, run: Current<RunRecord>, turn: TurnRecord, now: Date, count: StepCount): ItemsStep<TurnRecord>;
/**
 * Whether a (re)requested approval needs its task token stored: a retried or resumed request
 * carries a new one, and a pending approval must wake the execution that waits now. A decided one
 * keeps its decision (and the token it was decided on).
 */
export declare function tokenWanted(current: Current<ApprovalRecord>): boolean;
/** The approval is created once; a pending or decided one is returned as it is. */
export declare function upsertApproval(current: Current<ApprovalRecord>, approval: ApprovalRecord, now: Date): Step<ApprovalRecord>;
type ApprovalKey = Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>;
/** Only a pending approval can be decided: a second decision gets the first one back. */
export declare function decideApproval(current: Current<ApprovalRecord>, key: ApprovalKey, decision: ApprovalDecision, now: Date): Step<{
    decided: boolean;
    record: ApprovalRecord;
}>;
/** The first of two approvals, once: only on a pending approval without one. */
export declare function recordFirstApproval(current: Current<ApprovalRecord>, key: ApprovalKey, first: NonNullable<ApprovalRecord['firstApproval']>, linkId: string | undefined): Step<{
    recorded: boolean;
    record: ApprovalRecord;
}>;
/** In the pending-approvals index: an approval while it is pending. */
export declare const isPendingApproval: (record: Record<string, unknown>) => boolean;
/** In the running-runs index: a run while it runs. */
export declare const isRunningRun: (record: Record<string, unknown>) => boolean;
export {};
