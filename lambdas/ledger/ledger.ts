import type { BreakerState, BreakerStore } from '../records/breaker-state.js';
import type { LedgerIntegrityError } from '../shared/errors.js';
import type {
  ApprovalRecord,
  GuardEvent,
  KillFlag,
  MigrationRecord,
  ApprovalStatus,
  DecisionChannel,
  Counters,
  RecoveryRecord,
  ExtendableGuard,
  RunRecord,
  RunStatus,
  ToolCallRecord,
  ToolOutcome,
  TurnRecord,
  AggregateRecord,
  ApprovalRef,
  EffectApprovalRecord,
  EffectRecord,
  EffectResolution,
  ChildWait,
} from '../records/ledger-records.js';
import { DYNAMODB_BATCH_GET_MAX_KEYS } from '../shared/limits.js';
import type { FleetCounter, FleetDayRecord } from '../records/fleet.js';


/**
 * A `countStep` key with this prefix is added every time it is written and not remembered: the
 * history bound's records (guards/history.ts), which may count twice (a handoff a little early) but
 * must not push a step's key out of the run's window of counted keys (a step counted twice).
 */
export const UNKEYED_COUNT = 'unkeyed:';
/** How a run ends (`finishRun`). */
export type RunEnd = { status: Exclude<RunStatus, 'running'>; stopReason?: string; error?: { error: string; cause: string }; report?: RunRecord['report'] };
/** The run as the caller of an end read it (run-end.ts `endExpected`): the condition of `finishRun`'s second form. */
export type RunEndExpected = { readonly executionArn: string; readonly status: RunStatus; readonly error?: string };

export interface AttachOptions {
  previousArn?: string;
  fingerprint?: string;
  definitionHash?: string;
  /** A recorded move to another version of the agent (sets `agentVersion` to `migration.to.version`). */
  migration?: MigrationRecord;
}

export interface StepWant {
  turns?: readonly number[];
  calls?: readonly { turn: number; call: number }[];
  /** A circuit breaker's name. */
  breaker?: string;
  /** Another breaker's name, read in the same request to be handed on (CallModel reads its turn's calls' tools breaker: handed-step.ts). */
  handedBreaker?: string;
  /** The versions of the run item and the global kill item read, told too (StepRead `versions`): for a claim on them. */
  versions?: boolean;
}

export interface StepRead {
  run?: RunRecord;
  globalKill?: KillFlag;
  turns: TurnRecord[];
  calls: ToolCallRecord[];
  breaker?: BreakerState;
  /** The `handedBreaker` asked for, as read (absent when never saved). */
  handedBreaker?: BreakerState;
  /**
   * With `versions` asked for: the versions of the run item and the global kill item this read
   * found, what a write's claim on them checks (ToolCallLedger `claimCall`); absent when there is
   * no run, or the engine marks no version of either.
   */
  versions?: StepVersions;
}

/** The most keys `loadStep` reads at once (BatchGetItem's limit is 100). */
export const MAX_STEP_KEYS = DYNAMODB_BATCH_GET_MAX_KEYS;

/** Refuses a `loadStep` request over the limit, the same way in every implementation. */
export function checkStepWant(want: StepWant): void {
  const keys = 2 + (want.turns?.length ?? 0) + (want.calls?.length ?? 0) + (want.breaker === undefined ? 0 : 1) + (want.handedBreaker === undefined ? 0 : 1);
  if (keys > MAX_STEP_KEYS) throw new RangeError(`loadStep: ${keys} keys asked for, at most ${MAX_STEP_KEYS}`);
}

/**
 * The idempotency ledger, behind small role interfaces so that step logic never touches DynamoDB
 * directly, and each step names only the roles it uses. Every method that guards work is a single
 * conditional write (protocol.ts): a second attempt learns what the first one did instead of doing
 * it again.
 */
export interface Ledger extends RunLedger, GuardLedger, TurnLedger, ToolCallLedger, EffectLedger, AggregateLedger, FleetLedger, EffectApprovalLedger, ApprovalLedger, ChildWaitLedger, ExecutionRunLedger, BlobStore {}

/**
 * The runs: each run record's life from its creation to its end, and the executions that drive it
 * (a resume, a handoff and a migration each attach a new one).
 */
export interface RunLedger {
  /** Creates the run record; `false` when a run with this id exists already (nothing is written). */
  createRun(run: RunRecord): Promise<boolean>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** When `savepoint prune` removed the run of this id (createRun refuses the id from then on); undefined when it did not. */
  prunedRun(runId: string): Promise<{ prunedAt: string } | undefined>;
  /**
   * The newest `limit` runs of every agent, newest first (runs of the same instant by run id). On
   * DynamoDB a scan of the whole table, whatever the limit: a scan reads by key hash, not by age.
   * A run whose record fails verification is named to `onDamaged` and left out, or its
   * `Ledger.IntegrityError` thrown without it (as `listRunningRuns`).
   */
  listRuns(limit?: number, options?: DamagedRunOptions): Promise<RunRecord[]>;
  /**
   * The newest runs of one agent: a keyed query on DynamoDB (the `runsByAgent` index), never a
   * scan, so that a role that lists runs needs no grant on the whole table. Damaged records as `listRuns`.
   */
  listRunsOf(agent: string, limit?: number, options?: DamagedRunOptions & { notAfter?: string }): Promise<RunRecord[]>;
  /**
   * Marks `executionArn` as the execution driving the run (a resume appends a new one). With
   * `previousArn`, only if that execution still drives it: `undefined` when another one took over
   * first. `fingerprint` / `definitionHash` replace the run's (a forced resume on changed code);
   * with `migration` (`savepoint migrate`), so do `agentVersion`, and the migration is appended to
   * the run's `migrations`.
   */
  attachExecution(
    runId: string,
    executionArn: string,
    now: Date,
    options?: AttachOptions,
  ): Promise<RunRecord | undefined>;
  /**
   * Records a recovery of the run, if `executionArn` still drives it and no other recovery was
   * recorded since `previousKey` was read. `false` when the condition failed.
   */
  recordRecovery(runId: string, recovery: RecoveryRecord, expected: { executionArn: string; previousKey?: string }): Promise<boolean>;
  finishRun(runId: string, outcome: RunEnd, now: Date): Promise<RunRecord>;
  /** Only while the run is as `expected` (run-end.ts): a copy of the same event finds it ended, writes nothing, answers `undefined`. */
  finishRun(runId: string, outcome: RunEnd, now: Date, expected: RunEndExpected): Promise<RunRecord | undefined>;
  /**
   * The runs whose status is `running`, newest first: what the sweeper and the watchdog check.
   * A keyed query on DynamoDB (the sparse `runningRuns` index), never a scan.
   *
   * A run whose record fails verification is never listed: with `onDamaged` it is named there and
   * the others are listed (one damaged record must not stop every other run's recovery); without,
   * its `Ledger.IntegrityError` is thrown. (The embedded ledger verifies its whole log when it
   * opens, so it has no damaged record to name here.)
   */
  listRunningRuns(options?: DamagedRunOptions): Promise<RunRecord[]>;
  /** Appends a fork to the parent run's `forks`, once per fork; `false` when there is no such parent. */
  recordFork(parentRunId: string, fork: { runId: string; turn: number }): Promise<boolean>;
}

/**
 * The guards: what stops or bounds a run, from what is persisted (kill switches, guard events,
 * counted steps, budget extensions, the provider breakers).
 */
export interface GuardLedger extends BreakerStore {
  /** Sets the run's kill flag; the first kill stands. `false` when there is no such run. */
  killRun(runId: string, flag: KillFlag): Promise<boolean>;
  /** The kill flag of all runs (`savepoint kill --all`), if set. */
  getGlobalKill(): Promise<KillFlag | undefined>;
  setGlobalKill(flag: KillFlag | undefined): Promise<void>;
  /** Appends a guard event to the run record once per distinct reason. */
  recordGuardEvent(runId: string, event: GuardEvent): Promise<void>;
  /**
   * Closes a child run's spend for its parent, before it is settled there (records/child-budget.ts):
   * marks the run `settledIntoParentAt`, on the condition that its spend is final (it is over, and
   * every child of its own is settled), so that it is not resumed after. The run as marked (as it
   * was, when marked before); `undefined` when there is no such run or its spend is not final.
   */
  closeChildRun(runId: string, now: Date): Promise<RunRecord | undefined>;
  /**
   * Adds `deltas` to the run's counters exactly once per `stepKey`, atomically; `false` when the
   * step was counted already. With `calls`, the open turn's tool calls too, each once (StepCount).
   */
  countStep(runId: string, stepKey: string, deltas: Partial<Counters>, calls?: CallsCount): Promise<boolean>;
  /**
   * Applies an approved extension to the run's config once: sets the budget's new limit and
   * counts the extension, only if it is the next one.
   */
  applyBudgetExtension(runId: string, guard: ExtendableGuard, extension: number, limit: number): Promise<RunRecord>;
}

/** The model turns: each written once, the conversation they make, and what a step reads at once. */
export interface TurnLedger {
  /**
   * Stores a model turn once; returns the stored turn (the first one, if it was recorded before).
   * With `count`, the turn's step is counted in the same write (protocol.ts `recordTurnCounted`):
   * only by the write that records the turn — a turn found recorded is not counted here. With
   * `count.seen`, the global kill item is checked in the same write too, and `seen` is told the run
   * item as counted and the kill flag (turn-seen.ts `recordTurnSeen`) when this write counted the
   * turn: what a read right after it would find. An engine that cannot call it back (the remote
   * ledger) leaves it uncalled: the caller reads instead.
   */
  recordTurn(turn: TurnRecord, count?: TurnCount): Promise<TurnRecord>;
  getTurn(runId: string, turn: number): Promise<TurnRecord | undefined>;
  /**
   * Every turn, tool call and approval of a run, in conversation order: its trace. With
   * `fromTurn`, only those of that turn and later (a reader that holds the earlier ones; turns
   * and completed calls never change once written). Without it, the run record too where the read
   * of the run's partition held it (`run`: as `getRun` would answer, from the same request).
   */
  listConversation(
    runId: string,
    options?: { fromTurn?: number },
  ): Promise<{ turns: TurnRecord[]; calls: ToolCallRecord[]; approvals: ApprovalRecord[]; run?: RunRecord }>;
  /**
   * What one step needs, in one round trip (BatchGetItem on DynamoDB): the run record and the
   * global kill flag always, and the turns, tool calls and breaker asked for. Records that do not
   * exist are absent; `turns` and `calls` come in the order asked.
   */
  loadStep(runId: string, want?: StepWant): Promise<StepRead>;
}

/**
 * A step's count (GuardLedger `countStep`'s key and deltas), for a write that records the step and
 * counts it at once; with `calls`, the open turn's tool calls counted in the same write (open-turn.ts).
 */
export type StepCount = { readonly stepKey: string; readonly deltas: Partial<Counters>; readonly calls?: CallsCount };

/**
 * The completed tool calls of `turn` (by position), counted by a write of another step — the next
 * model turn's reservation, or the run's end — each once by its own key (`callStepKey`), and the
 * run's `callsCounted` holding them (ledger/open-turn.ts).
 */
export type CallsCount = {
  readonly turn: number;
  readonly calls: readonly number[];
  /** No call of the turn is left to make (the next model turn started, or it asked for none): the counters hold all of its calls. */
  readonly closed?: boolean;
};

/**
 * What a turn's counted write saw (turn-seen.ts `recordTurnSeen`): the run item as it wrote it, and
 * the global kill flag it checked unchanged; `basis`, where the engine can name them, the versions
 * of those two items then (what a later write's ConditionChecks compare: handed-step.ts).
 */
export type TurnSeen = { run: RunRecord; globalKill?: KillFlag; basis?: StepBasis };

/**
 * The versions of the run item and the global kill item a step's checks were made on, as the
 * engine marks them (DynamoDB: each item's seal attribute; `kill` null: the item absent). A write
 * given them holds only while both items are still those versions (ConditionChecks: nothing is
 * read, nothing of theirs rewritten). Opaque: only the engine that made them compares them. Told
 * by the step's own read (StepRead `versions`), or handed with a seal (`StepBasis`).
 */
export type StepVersions = {
  readonly run: string;
  readonly kill: string | null;
};

/**
 * The versions a step was handed (`StepVersions`, told by its turn's write: TurnSeen `basis`), with
 * the seal over them and what the step's checks are made on.
 */
export type StepBasis = StepVersions & {
  /**
   * The engine's seal over the two versions and what the step was handed with them (handed-versions.ts
   * `handedContent`): a write given the basis holds only if `content` is what was sealed — a state
   * made up elsewhere (a payload forged by whoever may invoke the function) is refused, as a changed one.
   */
  readonly mac: string;
  /**
   * What the step's checks were made on, the JSON text that was sealed (handed-versions.ts
   * `handedContent`): told with the basis by the turn's write, given back with it to a write.
   */
  readonly content?: string;
};

/**
 * A turn's count (TurnLedger `recordTurn`), and who is told what its write saw: `seen` with the
 * global kill item checked in the write (the decision after a final answer is made from it);
 * `handing` without (a turn's calls are handed it, and check the kill item at their own write,
 * on the version the engine knows of it without a request: the step's own read).
 */
export type TurnCount = StepCount & { readonly seen?: (seen: TurnSeen) => void; readonly handing?: (seen: TurnSeen) => void };

/**
 * The tool calls: claimed before their outside call, completed once. CallTool records a call
 * without its `count` (ledger/open-turn.ts: the next model turn counts the turn's calls); `count`
 * stays for a writer that records and counts a step at once.
 */
export interface ToolCallLedger {
  getCall(runId: string, turn: number, call: number): Promise<ToolCallRecord | undefined>;
  /**
   * Claims a tool call before its outside call: succeeds when no record exists, or when the record
   * is in flight and its lease has expired (the previous holder died). Otherwise returns the record
   * that is in the way (completed: use its result; in flight with a live lease: try again later).
   *
   * With `effect`, the call's business-key effect (EffectLedger) is claimed with it, in the same
   * write (protocol.ts `claimCallEffect`): both, or neither — and when the effect is completed, or
   * in flight in a live call, its record is returned (`effect`) and nothing is written.
   *
   * With `basis`, the claim holds only while the run item and the global kill item are still the
   * versions it names (ConditionChecks, in the same write): when any condition fails, nothing is
   * written and `StepChangedError` is thrown — the caller reads, and decides again, before anything
   * is sent. A basis handed (`StepBasis`, sealed) is written unread (the call taken as absent); the
   * versions of the step's own read (StepRead `versions`), on the call as the engine knows it. A
   * claim without either is conditioned on its own items only: a kill set between the caller's
   * read and the claim would not stop it.
   */
  claimCall(call: ToolCallRecord, now: Date, effect?: EffectHolder, basis?: StepBasis | StepVersions): Promise<CallClaim>;
  /**
   * Checks what a call was handed against the seal its turn's write made over it (`basis.mac`,
   * under the ledger's seal key; no request): resolves when `basis.content` is that state, rejects
   * with `StepChangedError` when it is another (made up on the way). A read handed its state is
   * checked so before it is sent: its record (`recordCall`) holds no condition on what it was sent on.
   */
  checkHanded(runId: string, basis: StepBasis): Promise<void>;
  /**
   * Records a call that needs no claim (a read: repeating it changes nothing outside) with its
   * outcome, in one write: succeeds where `claimCall` would; otherwise returns the record in the
   * way (completed: the first outcome stands). With `count`, the call's step is counted in the same
   * write (protocol.ts `recordCallCounted`), only when this write records it.
   *
   * With `basis` (and no `count`), what the call acted on is first checked against the seal its
   * turn's write made (a state other than that one: nothing written, `StepChangedError`, the
   * caller reads and decides again); the record is then written unread, as without it (the call
   * taken as absent: a record in the way is read and returned). No condition on the run or kill
   * item: a read changes nothing outside, and a kill while it ran keeps its result, as for any call
   * in flight.
   */
  recordCall(
    call: ToolCallRecord & { status: 'completed' },
    now: Date,
    count?: StepCount,
    basis?: StepBasis,
  ): Promise<{ recorded: true; record: ToolCallRecord } | { recorded: false; existing: ToolCallRecord }>;
  /**
   * Records the outcome of a claimed call; only an in-flight record can be completed. With
   * `effect`, the effect it holds is recorded in the same write: `ok` or `unknown` completes it (the
   * first outcome stands), anything else releases it. With `count`, the call's step is counted in
   * the same write too (protocol.ts `completeCallCounted`).
   */
  completeCall(completion: CallCompletion): Promise<ToolCallRecord>;
  /**
   * Ends the lease of an in-flight call whose outside call failed cleanly, so that the retry can
   * claim it at once; the call keeps its idempotency key, so a re-sent request is still deduplicated.
   * With `effect`, the lease of the effect it holds ends in the same write (the next claim of the
   * effect still waits its settle time).
   */
  releaseCall(runId: string, turn: number, call: number, now: Date, options?: ReleaseOptions): Promise<void>;
  /**
   * Extends the live lease of the claim attempt `attempts` holds while its outside call runs (a
   * long call outlasts one lease); `false` when the claim is no longer that attempt's, or its lease
   * has ended (released or run out). With `effect`, the effect's lease (its attempt `attempts`) in
   * the same write, by the same rule.
   */
  renewCall(renewal: CallRenewal): Promise<boolean>;
}

/** A claimed call's outcome, to record (ToolCallLedger `completeCall`). */
export interface CallCompletion {
  readonly runId: string;
  readonly turn: number;
  readonly call: number;
  readonly outcome: { outcome: ToolOutcome; result: string; latencyMs: number };
  readonly now: Date;
  /** The effect the call holds, completed (or released) in the same write; `unknown` when the outside call's outcome is not known. */
  readonly effect?: { key: string; unknown?: boolean };
  /** The call's step, counted in the same write. */
  readonly count?: StepCount;
}

/** A live claim's lease, extended (ToolCallLedger `renewCall`): the claim attempt `attempts`, to `leaseUntil`. */
export interface CallRenewal {
  readonly runId: string;
  readonly turn: number;
  readonly call: number;
  readonly attempts: number;
  readonly now: Date;
  readonly leaseUntil: Date;
  /** The effect the call holds, its lease extended in the same write (its attempt `attempts`). */
  readonly effect?: { key: string; attempts: number };
}

/** A claim of a call (and of its effect, when asked): claimed, or the record in the way (protocol.ts `CallEffectClaim`). */
export type CallClaim =
  | { claimed: true; record: ToolCallRecord; effect?: EffectRecord }
  | { claimed: false; existing: ToolCallRecord; effect?: undefined }
  | { claimed: false; existing?: undefined; effect: EffectRecord };

/** Who claims an effect: the call, its arguments, its lease (and settle time). */
/** How a call is released: with its effect (released together), and whether the attempt sent nothing (protocol.ts `releaseCall`). */
export interface ReleaseOptions {
  readonly effect?: { key: string } | undefined;
  readonly unsent?: boolean;
}

export type EffectHolder = Pick<EffectRecord, 'key' | 'runId' | 'turn' | 'call' | 'name' | 'args' | 'leaseUntil' | 'settleMs' | 'sentAt'>;
/** A call's outcome for its effect; `unknown`: it may have taken place (escalated), so it stands like a completed one. */
export type EffectOutcome = { outcome: ToolOutcome; result: string; latencyMs: number; unknown?: boolean };

/**
 * The effects a tool names by a business key, claimed across the agent's runs (the rules:
 * protocol.ts `claimEffect`), each with the call that holds it, in the same write
 * (ToolCallLedger's methods with `effect`). Each call of such an effect still has its own call record.
 */
export interface EffectLedger {
  getEffect(key: string): Promise<EffectRecord | undefined>;
  /**
   * Stores the chunks of the effect's result stored by reference (ledger/blobs.ts
   * `storeCallResult`) under the effect (protocol.ts `effectBlobKey`), as `BlobStore.putBlob`
   * does under a run: the effect's record outlives the run that made it (a prune keeps it), and a
   * later run of the same key is answered from it. Idempotent, like `putBlob`.
   */
  putEffectBlob(key: string, digest: string, chunks: readonly string[]): Promise<void>;
  /** The chunks stored under the effect for `digest`, in order; empty when there are none (`BlobStore.getBlob`'s). */
  getEffectBlob(key: string, digest: string): Promise<string[]>;
}

/** What a person found out about an escalated effect (`savepoint effects resolve`): EffectResolution's fields, and for `sent` the result later runs get. */
export interface EffectResolutionRequest {
  as: EffectResolution['as'];
  by: string;
  reason: string;
  /** `sent`: the result every later call of the key is answered with. */
  result?: string;
  /** The escalated call the person checked, as read: a later escalation of the key is another call, not checked. */
  expected?: Pick<EffectRecord, 'runId' | 'turn' | 'call' | 'attempts'>;
}

/**
 * A person's view of the business-key effects and their settling of an escalated one (`savepoint
 * effects`): what a storage engine's ledger offers (storage-ledger.ts `effectResolvingOf`), not a
 * role of the runs — no step lists or resolves effects.
 */
export interface EffectResolving extends Pick<EffectLedger, 'getEffect'> {
  /** Every business-key effect the ledger holds (a scan: an operator's command, not a step's). */
  listEffects(): Promise<EffectRecord[]>;
  /** protocol.ts `resolveEffect`: refused (InvalidInputError, nothing written) unless the effect is escalated. */
  resolveEffect(key: string, request: EffectResolutionRequest, now: Date): Promise<EffectRecord>;
}

/** What a reservation came to: the key's total after it (reserved), or as it stands (refused: nothing added). */
export type AggregateReservation = { reserved: boolean; total: number };

/** The amounts a tool moves per key across the agent's runs (ledger/aggregates.ts reserveAggregate). */
export interface AggregateLedger {
  /**
   * Adds `amount` to the key's total once per `holder` (`<runId>:<turn>:<call>`, or the effect's
   * business key: one effect adds once across runs), only while the
   * total stays within `threshold` (absent: added whatever the total). Atomic across runs.
   */
  reserveAggregate(reservation: { key: string; holder: string; amount: number; threshold?: number }, now: Date): Promise<AggregateReservation>;
  getAggregate(key: string): Promise<AggregateRecord | undefined>;
}

/** A model call's reservation under a fleet budget (FleetLedger `reserveInFleet`). */
export interface FleetReserveRequest {
  readonly runId: string;
  /** The call's count (`reserve:<turn>`) and what it adds (reservedTokens, reservedMicros). */
  readonly stepKey: string;
  readonly deltas: Partial<Counters>;
  /** The open turn's tool calls, counted with the reservation (StepCount `calls`). */
  readonly calls?: CallsCount;
  /** Today's counters, with their limits (records/fleet.ts fleetCounters). */
  readonly counters: readonly FleetCounter[];
  /** The most one lease takes (less as a counter runs low). */
  readonly leaseMicros: number;
}

/** What a reservation came to: reserved (`leased`: micro-dollars this reservation took from the counters, 0 within the lease), or refused, saying why. */
export type FleetReservation = { reserved: true; leased: number } | { reserved: false; reason: string };

/**
 * A fleet budget's leases (ledger/fleet-leases.ts): a model call reserved within its run's lease of
 * the day, the lease taken from the day's counters in chunks, and given back when the run ends.
 */
export interface FleetLedger {
  /**
   * Counts the call's reservation (`countStep` of `stepKey`) within the run's lease, leasing a
   * chunk from each of `counters` first when the lease does not cover it — or refuses it, writing
   * nothing, when a counter's day has not that much left (or no free runs slot). Once per `stepKey`.
   */
  reserveInFleet(request: FleetReserveRequest, now: Date): Promise<FleetReservation>;
  /** Gives the unused part of the run's lease back to its counters, once; the micro-dollars given back (0: none held). */
  returnFleetLease(runId: string, now: Date): Promise<number>;
  /** A counter of a day, by its partition key (records/fleet.ts agentCounterPk, stackCounterPk). */
  getFleetDay(pk: string): Promise<FleetDayRecord | undefined>;
}

/** A call's request to share its effect's approval (ledger/effect-approvals.ts shareApproval). */
export interface ApprovalShareRequest {
  /** The effect's key (`<agent>:<tool>:<business key>`). */
  key: string;
  /** SHA-256 of the tool's name and arguments (approvals/effect-approval.ts). */
  subject: string;
  /** The call's own approval. */
  approval: ApprovalRef;
  /** The leader's approval id, when the caller found it expired undecided: this call leads instead. */
  replacing?: string;
}

/** What sharing came to: this call asks a person (leader), waits on the leader's decision (follower), or asks on its own (apart: another subject holds the key). */
export type ApprovalShare = { role: 'leader' | 'follower'; leader: ApprovalRef } | { role: 'apart' };

/** One approval request per effect across the agent's runs (ledger/effect-approvals.ts). */
export interface EffectApprovalLedger {
  /** Leads or follows the effect's approval, atomically across runs (one conditional write). */
  shareApproval(request: ApprovalShareRequest, now: Date): Promise<ApprovalShare>;
  getEffectApproval(key: string): Promise<EffectApprovalRecord | undefined>;
}

/** The approvals: requested with a task token, decided once. */
export interface ApprovalLedger {
  /**
   * Creates the approval for a call, or refreshes the task token of a pending one (a decided one
   * keeps its token and decision); returns the stored record. The token is stored apart from the
   * approval (`getTaskToken`): no record the ledger returns holds it.
   */
  upsertApproval(approval: ApprovalRecord, taskToken: string): Promise<ApprovalRecord>;
  getApproval(runId: string, turn: number, call: number): Promise<ApprovalRecord | undefined>;
  getBudgetApproval(runId: string, guard: ExtendableGuard, extension: number): Promise<ApprovalRecord | undefined>;
  findApproval(approvalId: string): Promise<ApprovalRecord | undefined>;
  /**
   * The pending approvals, by deadline. With `undelivered`, the decisions still owed to their
   * executions too (ApprovalRecord `undelivered`), as the index lists them: read each itself
   * (`getApproval`) for the whole record. The same query either way.
   */
  listPendingApprovals(options?: { undelivered?: boolean }): Promise<ApprovalRecord[]>;
  /**
   * Records a decision once: only a pending approval can be decided. Returns whether this call
   * decided it, and the stored record (with the earlier decision when it did not).
   */
  decideApproval(
    key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>,
    decision: ApprovalDecision,
    now: Date,
  ): Promise<{ decided: boolean; record: ApprovalRecord }>;
  /**
   * Records the first of two approvals, once: only on a pending approval without one. Returns
   * whether this call recorded it, and the stored record.
   */
  recordFirstApproval(
    key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>,
    first: NonNullable<ApprovalRecord['firstApproval']>,
    linkId?: string,
  ): Promise<{ recorded: boolean; record: ApprovalRecord }>;
  /**
   * The task token an approval's execution waits on, undefined when none was stored. On DynamoDB
   * it is its own item (partition `TOKEN#<runId>`), which only the approval functions' roles may read.
   */
  getTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<string | undefined>;
  /** Drops an approval's `undelivered` mark once its decision is delivered (or nothing waits on it); no-op without one. */
  markDelivered(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<void>;
}

/**
 * A parent's wait for its child run (`defineAgentTool`): the task token its AwaitChildRun state
 * waits on, stored apart (`WAIT#<runId>`, records childWaitKey) like an approval's, and read when
 * the child's execution ends. A put replaces the token of an earlier execution of the parent.
 */
export interface ChildWaitLedger {
  storeChildWait(wait: ChildWait, taskToken: string): Promise<void>;
  getChildWait(wait: ChildWait): Promise<string | undefined>;
}

/**
 * The run an execution drives, noted by StartRun where the execution's input does not name it
 * (records executionRunKey): how the stack's shared functions, which load no agent's code, find
 * the run of an execution that ended — never by asking Step Functions (issue 34). A plain item
 * outside the seal, like a task token: a false one leads nowhere, since the sealed run record must
 * itself name the execution before anything is done to the run.
 */
export interface ExecutionRunLedger {
  noteExecutionRun(executionArn: string, runId: string): Promise<void>;
  runOfExecution(executionArn: string): Promise<string | undefined>;
}

/** Large values by reference (ledger/blobs.ts). */
export interface BlobStore {
  /**
   * Stores the chunks of a large value (a tool result over the item limit, ledger/blobs.ts) under
   * its SHA-256 `digest`, one item each, outside the run's conversation partition. Idempotent: the
   * same digest is always the same chunks.
   */
  putBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void>;
  /** The chunks stored under `digest`, in order; empty when there are none. Verifying them is the caller's (blobs.ts). */
  getBlob(runId: string, digest: string): Promise<string[]>;
}

/** A decision as the ledger records it (`linkId` joins the approval's used links). */
export interface ApprovalDecision {
  status: Exclude<ApprovalStatus, 'pending'>;
  reason?: string;
  decidedBy: string;
  decidedVia?: DecisionChannel;
  decisionMac?: string;
  waitedMs?: number;
  linkId?: string;
  /** Decided as the approval it shares was (ApprovalRecord `sharedDecision`). */
  sharedDecision?: ApprovalRecord['sharedDecision'];
  /** Owed to the execution until `markDelivered` (ApprovalRecord `undelivered`): a decision's and an expiry's. */
  undelivered?: true;
}

export interface DamagedRunOptions {
  /** Called with each run whose record fails verification, instead of throwing. */
  onDamaged?: (runId: string, error: LedgerIntegrityError) => void;
}
