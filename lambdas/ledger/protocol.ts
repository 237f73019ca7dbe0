import type { BreakerState } from '../records/breaker-state.js';
import { UNKEYED_COUNT, type EffectResolutionRequest, type CallsCount, type AttachOptions, type EffectHolder, type EffectOutcome, type StepCount } from './ledger.js';
import { approvalSkOf, extended, callSk, runKey, turnSk, type ApprovalRecord, type Counters, type EffectRecord, type ExtendableGuard, type GuardEvent, type KillFlag, type RecoveryRecord, type RunRecord, type RunStatus, type ToolCallRecord, type ToolOutcome, type TurnRecord } from '../records/ledger-records.js';
import { addCounts, countCalls, mayCount, withKeys } from './counted-steps.js';
import { InvalidInputError } from '../shared/errors.js';
import { settledChildRefusal } from '../records/child-budget.js';

export { COUNTED_STEPS_KEPT } from './counted-steps.js';

/**
 * The ledger's protocol, once: every rule that guards work is a pure transition here (an
 * approval's in approval-protocol.ts), from the one item it reads to the item it writes (or to an
 * answer without a write, or to a refusal). The
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

export type Key = { pk: string; sk: string };

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
export type Step<R> = { keep: R } | { write: Stored; answer: R } | { fail: Error };

/** The error a failed condition raises: the name DynamoDB gives ConditionalCheckFailedException, on every engine. */
export class ConditionalWriteError extends Error {
  override readonly name = 'ConditionalCheckFailedException';
  constructor(what: string) {
    super(`The conditional request failed: ${what}`);
  }
}

/** Ledger records expire (DynamoDB TTL on `expiresAt`, epoch seconds) this long after they are written. */
export const RETENTION_SECONDS = 90 * 24 * 3600;
export const expiresAt = (now: Date) => Math.floor(now.getTime() / 1000) + RETENTION_SECONDS;

export const GLOBAL_KILL: Key = { pk: 'GLOBAL', sk: 'KILL' };
export const breakerKey = (name: string): Key => ({ pk: `BREAKER#${name}`, sk: 'BREAKER' });
export const turnKey = (runId: string, turn: number): Key => ({ pk: runKey(runId).pk, sk: turnSk(turn) });
export const callKey = (runId: string, turn: number, call: number): Key => ({ pk: runKey(runId).pk, sk: callSk(turn, call) });
export const approvalKey = (approval: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Key => ({
  pk: runKey(approval.runId).pk,
  sk: approvalSkOf(approval),
});
/** An effect claimed across an agent's runs by its business key (EffectRecord). */
export const effectKey = (key: string): Key => ({ pk: `EFFECT#${key}`, sk: 'EFFECT' });
export const aggregateKey = (key: string): Key => ({ pk: `AGG#${key}`, sk: 'AGG' });
const chunkSk = (index: number) => String(index).padStart(5, '0');
/** A chunk of a large value: `BLOB#<runId>` / `<digest>#<index>` (sorts in chunk order). */
export const blobKey = (runId: string, digest: string, index: number): Key => ({ pk: `BLOB#${runId}`, sk: `${digest}#${chunkSk(index)}` });
/**
 * A chunk of a business-key effect's result stored by reference, in the effect's partition beside
 * its record: `EFFECT#<key>` / `BLOB#<digest>#<index>`. The effect's, not the run's that made it:
 * the record outlives that run (a prune keeps it, pruning.ts `runPartitions`), and so must what it
 * points at; it goes when the effect's partition goes (TTL), like the record.
 */
export const effectBlobKey = (key: string, digest: string, index: number): Key => ({ pk: effectKey(key).pk, sk: `BLOB#${digest}#${chunkSk(index)}` });

export type Current<T> = Stored<T> | undefined;
export const keep = <R>(answer: R): Step<R> => ({ keep: answer });
export const write = <T, R>(record: T, meta: Meta, answer: R): Step<R> => ({ write: { record: record as Record<string, unknown>, meta }, answer });
export const fail = (error: Error): Step<never> => ({ fail: error });

// ── runs ────────────────────────────────────────────────────────────────────────────────────

/** A run is created once: a second start with the same id finds it (and resumes it). */
export function createRun(current: Current<RunRecord>, run: RunRecord, now: Date): Step<boolean> {
  return current ? keep(false) : write(run, { expiresAt: expiresAt(now) }, true);
}

/**
 * Two executions resuming the same run at once: only the first to replace the dead one drives it
 * (`previousArn`); without it, any execution takes the run over.
 */
export function attachExecution(current: Current<RunRecord>, runId: string, executionArn: string, now: Date, options: AttachOptions): Step<RunRecord | undefined> {
  if (!current || (options.previousArn !== undefined && current.record.executionArn !== options.previousArn)) {
    return options.previousArn !== undefined ? keep(undefined) : fail(new ConditionalWriteError(`attachExecution: no run ${runId}`));
  }
  // A child settled into its parent first (ledger/child-settle.ts) is not resumed: its spend is final there.
  if (current.record.settledIntoParentAt !== undefined) return fail(new InvalidInputError(settledChildRefusal(current.record)));
  const { finishedAt: _finished, stopReason: _reason, error: _error, ...run } = current.record;
  const next: RunRecord = {
    ...run,
    executionArn,
    executions: [...(run.executions ?? []), executionArn],
    // Rides on this same write: the span links of the trace are built from it.
    attachments: [...(run.attachments ?? []), { execution: (run.executions ?? []).length, at: now.toISOString(), modelTurns: run.modelTurns }],
    status: 'running',
    updatedAt: now.toISOString(),
    ...(options.fingerprint !== undefined && { fingerprint: options.fingerprint }),
    ...(options.definitionHash !== undefined && { definitionHash: options.definitionHash }),
    ...(options.migration && { migrations: [...(run.migrations ?? []), options.migration] }),
    ...(options.migration?.to.version !== undefined && { agentVersion: options.migration.to.version }),
  };
  return write(next, current.meta, next);
}

/**
 * The run's recovery record is its own lock: a second delivery of the same ended execution, or a
 * racing recovery, finds another key than the one it read.
 */
export function recordRecovery(current: Current<RunRecord>, recovery: RecoveryRecord, expected: { executionArn: string; previousKey?: string }): Step<boolean> {
  if (!current || current.record.executionArn !== expected.executionArn || current.record.recovery?.key !== expected.previousKey) return keep(false);
  return write({ ...current.record, recovery, updatedAt: recovery.at }, current.meta, true);
}

/** The first kill stands; `false` when there is no such run. */
export function killRun(current: Current<RunRecord>, flag: KillFlag): Step<boolean> {
  if (!current) return keep(false);
  return current.record.killed === undefined ? write({ ...current.record, killed: flag }, current.meta, true) : keep(true);
}

export function setGlobalKill(flag: KillFlag | undefined): Stored {
  return { record: { kind: 'kill', ...(flag && { flag }) }, meta: {} };
}

/**
 * A fork of the run, appended once to the parent's record: with the fork's own `forkedFrom`, the
 * lineage is sealed in both runs' records. `false` when there is no such parent.
 */
export function recordFork(current: Current<RunRecord>, fork: { runId: string; turn: number }): Step<boolean> {
  if (!current) return keep(false);
  if (current.record.forks?.some((known) => known.runId === fork.runId)) return keep(true);
  return write({ ...current.record, forks: [...(current.record.forks ?? []), fork] }, current.meta, true);
}

/** Once per distinct reason: a warning repeated on every turn does not fill the record. */
export function recordGuardEvent(current: Current<RunRecord>, event: GuardEvent): Step<void> {
  const reasons = current?.meta.guardReasons ?? [];
  if (!current || reasons.includes(event.reason)) return keep(undefined);
  const next = { ...current.record, guardEvents: [...(current.record.guardEvents ?? []), event] };
  return write(next, { ...current.meta, guardReasons: [...reasons, event.reason] }, undefined);
}

/**
 * The counted step keys make the count idempotent: a retried step that was counted already changes
 * nothing. The counters are monotone sums; the keys kept are the last COUNTED_STEPS_KEPT.
 *
 *   countStep(turn:7) ─► turn:7 not in the window ─► counters += deltas, window = […, turn:7] (oldest dropped)
 *   retry     turn:7 ─► turn:7 in the window     ─► nothing written
 *
 * A child's reservation and settle keep their own rule besides (counted-steps.ts `mayCount`).
 */
export function countStep(current: Current<RunRecord>, stepKey: string, deltas: Partial<Counters>, calls?: CallsCount): Step<boolean> {
  const counted = current?.meta.countedSteps ?? [];
  if (!current || counted.includes(stepKey) || !mayCount(counted, stepKey)) return keep(false);
  const next: Record<string, unknown> = { ...current.record };
  addCounts(next, deltas);
  // The open turn's calls (open-turn.ts), then the step's own key, the newest: a retry of this write finds it.
  const keys = [...(calls ? countCalls(next, counted, calls) : []), ...(stepKey.startsWith(UNKEYED_COUNT) ? [] : [stepKey])];
  return write(next, withKeys(current.meta, keys), true);
}

/** Only a later extension of this budget applies: a repeated or stale one changes nothing. */
export function applyBudgetExtension(current: Current<RunRecord>, runId: string, guard: ExtendableGuard, extension: number, limit: number): Step<RunRecord> {
  if (!current) return fail(new Error(`no run ${runId}`));
  const run = current.record;
  const applied = run.budgetExtensions?.[guard];
  if (applied !== undefined && applied >= extension) return keep(run);
  // A budget's extension raises its limit; a loop's lets the run go on after the turn it tripped at.
  const next: RunRecord = { ...run, ...extended(run, guard, limit), budgetExtensions: { ...run.budgetExtensions, [guard]: extension } };
  return write(next, current.meta, next);
}

// ── breakers ────────────────────────────────────────────────────────────────────────────────

/** Optimistic: the version read must still be there (version 1 may also create the breaker). */
export function saveBreaker(current: Current<BreakerState>, next: BreakerState): Step<boolean> {
  const expected = current ? current.record.version === next.version - 1 : next.version === 1;
  return expected ? write({ kind: 'breaker', ...next }, {}, true) : keep(false);
}

/** A breaker as read: the record without its `kind`. */
export function breakerOf(record: Record<string, unknown> | undefined): BreakerState | undefined {
  if (!record) return undefined;
  const { kind: _kind, ...state } = record;
  return state as unknown as BreakerState;
}

// ── turns and tool calls ────────────────────────────────────────────────────────────────────

/** A turn is written once; a retried CallModel gets the first one back. */
export function recordTurn(current: Current<TurnRecord>, turn: TurnRecord, now: Date): Step<TurnRecord> {
  return current ? keep(current.record) : write(turn, { expiresAt: expiresAt(now) }, turn);
}

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
export function takeoverAfter(record: Pick<ToolCallRecord, 'leaseUntil' | 'settleMs' | 'sentAt'>): string {
  if (!record.settleMs) return record.leaseUntil;
  if (record.sentAt === undefined) return new Date(Date.parse(record.leaseUntil) + record.settleMs).toISOString();
  const settled = new Date(Date.parse(record.sentAt) + record.settleMs).toISOString();
  return settled > record.leaseUntil ? settled : record.leaseUntil;
}

/** Claimable: there is no record, or it is in flight and past `takeoverAfter` (its holder died, or failed without knowing). */
export function claimable(current: Current<ToolCallRecord>, now: Date): boolean {
  return !current || (current.record.status === 'in_flight' && takeoverAfter(current.record) < now.toISOString());
}

export type Claim = { claimed: true; record: ToolCallRecord } | { claimed: false; existing: ToolCallRecord };
export type Recorded = { recorded: true; record: ToolCallRecord } | { recorded: false; existing: ToolCallRecord };

export function claimCall(current: Current<ToolCallRecord>, call: ToolCallRecord, now: Date): Step<Claim> {
  if (!claimable(current, now)) return keep({ claimed: false, existing: current!.record });
  // The claim's own fields (an outcome passed in is not the claim's): the record's earlier ones stay.
  const { runId, turn, toolCallId, name, args, effect, idempotencyKey, leaseUntil, settleMs, sentAt, effectKey: effect_, guarantee } = call;
  const claim = {
    kind: 'tool' as const, runId, turn, call: call.call, toolCallId, name, args, effect, idempotencyKey, status: 'in_flight' as const, leaseUntil,
    ...(settleMs !== undefined && { settleMs }),
    ...(sentAt !== undefined && { sentAt }),
    ...(effect_ !== undefined && { effectKey: effect_ }),
    ...(guarantee !== undefined && { guarantee }),
  };
  // The earlier attempt's send of unknown outcome goes with the claim (`earlierSend`): the taker decides on it.
  const { sentAt: earlier, earlierSend: _earlier, ...before } = current?.record ?? ({} as Partial<ToolCallRecord>);
  const next = { ...before, ...claim, ...(earlier !== undefined && { earlierSend: earlier }), attempts: (current?.record.attempts ?? 0) + 1 } as ToolCallRecord;
  return write(next, { ...current?.meta, expiresAt: expiresAt(now) }, { claimed: true, record: next });
}

/** A call that needs no claim (a read) and its outcome, in one write, where a claim would succeed. */
export function recordCall(current: Current<ToolCallRecord>, call: ToolCallRecord & { status: 'completed' }, now: Date): Step<Recorded> {
  if (!claimable(current, now)) return keep({ recorded: false, existing: current!.record });
  const next: ToolCallRecord = { ...current?.record, ...call, attempts: (current?.record.attempts ?? 0) + 1 };
  return write(next, { ...current?.meta, expiresAt: expiresAt(now) }, { recorded: true, record: next });
}

export type CallOutcome = { outcome: ToolOutcome; result: string; latencyMs: number };

/** Only an in-flight record can be completed: a second completion is refused, the first outcome stands. */
export function completeCall(current: Current<ToolCallRecord>, key: Key, runId: string, outcome: CallOutcome, now: Date): Step<ToolCallRecord> {
  if (current?.record.status !== 'in_flight') return fail(new ConditionalWriteError(`completeCall: call ${key.sk} of run ${runId} is not in flight`));
  const next: ToolCallRecord = { ...current.record, status: 'completed', outcome: outcome.outcome, result: outcome.result, latencyMs: outcome.latencyMs, recordedAt: now.toISOString() };
  return write(next, current.meta, next);
}

/**
 * Ends the lease of an in-flight call (its attempt failed): the retry claims it at once, or after
 * the settle time. `unsent`: the attempt sent nothing that took effect (refused, never sent, its
 * reconcile failed): the send of unknown outcome is the earlier one (`earlierSend`), if any.
 */
export function releaseCall(current: Current<ToolCallRecord>, now: Date, unsent = false): Step<void> {
  if (current?.record.status !== 'in_flight') return keep(undefined);
  return write({ ...(unsent ? unsentAgain(current.record) : current.record), leaseUntil: endedBy(now) }, current.meta, undefined);
}

function unsentAgain<R extends { sentAt?: string; earlierSend?: string }>(record: R): R {
  const { sentAt: _sent, earlierSend, ...rest } = record;
  return { ...rest, ...(earlierSend !== undefined && { sentAt: earlierSend }) } as R;
}

/**
 * The `leaseUntil` of a lease released at `now`: a millisecond before it, as `claimable` takes
 * over only a lease that ended strictly before `now` — so a retry at the same instant (a standing
 * clock, a fast retry) claims it at once, and a settle time counts from the release.
 */
function endedBy(now: Date): string {
  return new Date(now.getTime() - 1).toISOString();
}

/**
 * The live holder of a claim keeps its lease while its outside call runs: the same attempt (no
 * other has claimed since), still in flight on a live lease, pushes `leaseUntil` on. A lease that
 * ended (released, or run out) is not revived, and a holder that died stops renewing.
 */
export function renewCall(current: Current<ToolCallRecord>, attempts: number, now: Date, leaseUntil: Date): Step<boolean> {
  const record = current?.record;
  const live = record?.status === 'in_flight' && record.attempts === attempts && record.leaseUntil > now.toISOString();
  if (!live || record.leaseUntil >= leaseUntil.toISOString()) return keep(false);
  return write({ ...record, leaseUntil: leaseUntil.toISOString() }, current!.meta, true);
}

// ── effects claimed across runs (a business key) ────────────────────────────────────────────

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

export type EffectClaim = { claimed: true; record: EffectRecord } | { claimed: false; existing: EffectRecord };

const holds = (record: EffectRecord, holder: Pick<EffectRecord, 'runId' | 'turn' | 'call'>) =>
  record.runId === holder.runId && record.turn === holder.turn && record.call === holder.call;

export function claimEffect(current: Current<EffectRecord>, holder: EffectHolder, now: Date): Step<EffectClaim> {
  const record = current?.record;
  const live = record?.status === 'in_flight' && !holds(record, holder) && !(takeoverAfter(record) < now.toISOString());
  if (record && (record.status === 'completed' || live)) return keep({ claimed: false, existing: record });
  // Absent or released: a first claim. In flight (the holder's retry, or a takeover): the next
  // attempt of the same effect, with the arguments that may have reached the provider already.
  const again = record?.status === 'in_flight';
  const { key, runId, turn, call, name, args, leaseUntil, settleMs, sentAt } = holder;
  const next: EffectRecord = {
    kind: 'effect', key, runId, turn, call, name,
    args: again ? record.args : args,
    status: 'in_flight',
    leaseUntil,
    ...(settleMs !== undefined && { settleMs }),
    ...(sentAt !== undefined && { sentAt }),
    ...(again && record.sentAt !== undefined && { earlierSend: record.sentAt }),
    attempts: again ? record.attempts + 1 : 1,
    // What people found out about its earlier escalations stays with the effect (resolveEffect).
    ...(record?.resolutions && { resolutions: record.resolutions }),
  };
  return write(next, { ...current?.meta, expiresAt: expiresAt(now) }, { claimed: true, record: next });
}

/**
 * The outcome of a claimed effect. `ok`, or `unknown` (it may have happened: a person decides):
 * completed, and every later claim gets this result. Any other outcome (the provider refused it,
 * a person rejected it) releases the claim: no effect took place. A completed effect keeps its
 * first outcome; only the holder releases its claim.
 */
export function completeEffect(current: Current<EffectRecord>, holder: Pick<EffectRecord, 'key' | 'runId' | 'turn' | 'call'>, outcome: EffectOutcome, now: Date): Step<EffectRecord> {
  if (!current) return fail(new ConditionalWriteError(`completeEffect: effect ${holder.key} was never claimed`));
  const record = current.record;
  const stands = outcome.outcome === 'ok' || outcome.unknown === true;
  if (record.status !== 'in_flight' || (!stands && !holds(record, holder))) return keep(record);
  const next: EffectRecord =
    stands
      ? { ...record, status: 'completed', outcome: outcome.outcome, result: outcome.result, recordedAt: now.toISOString() }
      : { ...record, status: 'released', outcome: outcome.outcome, leaseUntil: now.toISOString() };
  return write(next, current.meta, next);
}

/** The holder's live claim keeps its lease while its outside call runs (as `renewCall`): the same attempt, a lease not yet ended. */
export function renewEffect(current: Current<EffectRecord>, holder: Pick<EffectRecord, 'runId' | 'turn' | 'call'>, attempts: number, now: Date, leaseUntil: Date): Step<boolean> {
  const record = current?.record;
  const live = record?.status === 'in_flight' && holds(record, holder) && record.attempts === attempts && record.leaseUntil > now.toISOString();
  if (!live || record.leaseUntil >= leaseUntil.toISOString()) return keep(false);
  return write({ ...record, leaseUntil: leaseUntil.toISOString() }, current!.meta, true);
}

/** Ends the holder's lease (its attempt failed), as `releaseCall`. */
export function releaseEffect(current: Current<EffectRecord>, holder: Pick<EffectRecord, 'runId' | 'turn' | 'call'>, now: Date, unsent = false): Step<void> {
  const record = current?.record;
  return !(record?.status === 'in_flight' && holds(record, holder)) ? keep(undefined) : write({ ...(unsent ? unsentAgain(record) : record), leaseUntil: endedBy(now) }, current!.meta, undefined);
}

// ── an escalated effect, settled by a person ───────────────────────────────────────────────

/**
 * Escalated: completed with an outcome other than `ok`. Only an unknown outcome completes an
 * effect so (completeEffect: any other failure releases it), and it then stands like a done one —
 * every later claim of the key is answered `outcome_unknown` — until a person settles it.
 */
export const isEscalated = (record: EffectRecord): boolean => record.status === 'completed' && record.outcome !== undefined && record.outcome !== 'ok';

/**
 * A person settles an escalated effect once they checked with the provider, on the version read
 * (a change since — another resolution, a later claim — is refused, not overwritten):
 *
 *   completed, outcome unknown ─┬─ not_sent ─► released: the next run of the key claims it and sends
 *                               └─ sent     ─► completed, ok, `result`: later runs are answered with it
 *   anything else (in flight, done, released, absent) ─► refused, nothing written
 *
 * The escalated call's own record is not touched (the run's history stays); the resolution is
 * appended to the effect's `resolutions`, which later claims keep.
 */
export function resolveEffect(current: Current<EffectRecord>, key: string, request: EffectResolutionRequest, now: Date): Step<EffectRecord> {
  const record = current?.record;
  if (!record) return fail(new InvalidInputError(`no effect ${key} in the ledger`));
  const held = `run ${record.runId} (turn ${record.turn}, call ${record.call})`;
  if (!isEscalated(record)) {
    const state = record.status === 'completed' ? 'done (its outcome known)' : record.status === 'released' ? 'released (claimable: a run of its key sends it)' : `in flight in ${held}`;
    return fail(new InvalidInputError(`effect ${key} is ${state}: only an escalated effect (its outcome unknown) can be resolved; nothing changed`));
  }
  const expected = request.expected;
  if (expected && !(holds(record, expected) && record.attempts === expected.attempts)) {
    return fail(new InvalidInputError(`effect ${key} changed since it was read: it is now the escalation of ${held}, not the one checked; nothing changed`));
  }
  const at = now.toISOString();
  const resolutions = [...(record.resolutions ?? []), { as: request.as, by: request.by, at, reason: request.reason, runId: record.runId, turn: record.turn, call: record.call }];
  const next: EffectRecord =
    request.as === 'not_sent'
      ? { ...record, status: 'released', leaseUntil: endedBy(now), resolutions }
      : { ...record, outcome: 'ok', result: request.result ?? sentResult(request, at), recordedAt: at, resolutions };
  return write(next, current.meta, next);
}

/** What later calls of an effect a person recorded as sent are told, when they gave no result. */
function sentResult(request: Pick<EffectResolutionRequest, 'by' | 'reason'>, at: string): string {
  return JSON.stringify({ resolved: 'sent', message: `done: ${request.by} checked with the provider at ${at} that it took effect (${request.reason}); not sent again` });
}

// ── a call and its effect, in one write ─────────────────────────────────────────────────────

/**
 * What a rule over several items decides: per item, in the order of their keys, the item it
 * writes, `undefined` for an item kept as read — checked, not written — or `null` for one left
 * out of the write (neither written nor checked), all written together on the condition that
 * every item written or checked is still the one read (storage-ledger.ts `updateItems`), or none.
 */
export type ItemsStep<R> = { keep: R } | { writes: readonly (Stored | undefined | null)[]; answer: R } | { fail: Error };

/** What a rule over two items decides (ItemsStep): an item kept is checked. */
export type PairStep<R> = { keep: R } | { writes: readonly [Stored | undefined, Stored | undefined]; answer: R } | { fail: Error };

/** Two rules over two items, as one: a refusal of either refuses both; a write of either writes both (the other checked). */
function pair<A, B, R>(first: Step<A>, second: Step<B>, answer: (a: A, b: B) => R): PairStep<R> {
  if ('fail' in first) return first;
  if ('fail' in second) return second;
  const result = answer('keep' in first ? first.keep : first.answer, 'keep' in second ? second.keep : second.answer);
  const writes = ['write' in first ? first.write : undefined, 'write' in second ? second.write : undefined] as const;
  return writes[0] || writes[1] ? { writes, answer: result } : { keep: result };
}

/** A call claimed with its effect: both, or the record in the way — the call's own, or the effect's held elsewhere. */
export type CallEffectClaim =
  | { claimed: true; record: ToolCallRecord; effect: EffectRecord }
  | { claimed: false; existing: ToolCallRecord }
  /** Completed (its result is this call's) or in flight in a live call: nothing written. */
  | { claimed: false; effect: EffectRecord };

/**
 * `claimCall` and `claimEffect` in one write: the call's claim and its effect's, each by its own
 * rule, or neither. One round trip where there were two, and no call left claimed (to be
 * released again) when its effect is held elsewhere:
 *
 *   call not claimable ─► the call's record (completed: its result; in flight: Agent.LeaseHeld)
 *   call claimable ─► effect completed, or in flight in a live call ─► the effect's record, nothing written
 *                  ─► effect claimable (none, released, its lease and settle time over, this call's own) ─► both written
 */
export function claimCallEffect(call: Current<ToolCallRecord>, effect: Current<EffectRecord>, entry: ToolCallRecord, holder: EffectHolder, now: Date): PairStep<CallEffectClaim> {
  const byCall = claimCall(call, entry, now);
  if (!('write' in byCall)) return byCall as { keep: { claimed: false; existing: ToolCallRecord } };
  const byEffect = claimEffect(effect, holder, now);
  if (!('write' in byEffect)) return { keep: { claimed: false, effect: (byEffect as { keep: { existing: EffectRecord } }).keep.existing } };
  return { writes: [byCall.write, byEffect.write], answer: { claimed: true, record: byCall.write.record as unknown as ToolCallRecord, effect: byEffect.write.record as unknown as EffectRecord } };
}

type EffectOf = Pick<EffectRecord, 'key' | 'runId' | 'turn' | 'call'>;

/** `completeEffect` and `completeCall` in one write: the call's outcome recorded, its effect completed (or released) by the same outcome. */
export function completeCallEffect(call: Current<ToolCallRecord>, effect: Current<EffectRecord>, key: Key, holder: EffectOf, outcome: EffectOutcome, now: Date): PairStep<ToolCallRecord> {
  const { unknown: _unknown, ...callOutcome } = outcome;
  return pair(completeCall(call, key, holder.runId, callOutcome, now), completeEffect(effect, holder, outcome, now), (record) => record);
}

/** `releaseCall` and `releaseEffect` in one write: the retry claims both again (the effect after its settle time). */
export function releaseCallEffect(call: Current<ToolCallRecord>, effect: Current<EffectRecord>, holder: EffectOf, now: Date, unsent = false): PairStep<void> {
  return pair(releaseCall(call, now, unsent), releaseEffect(effect, holder, now, unsent), () => undefined);
}

/** `renewCall` and `renewEffect` in one write; `true` when the call's lease was renewed (its effect's with it, while the same attempt holds it). */
export function renewCallEffect(
  call: Current<ToolCallRecord>,
  effect: Current<EffectRecord>,
  holder: EffectOf & { attempts: number },
  attempts: number,
  now: Date,
  leaseUntil: Date,
): PairStep<boolean> {
  return pair(renewCall(call, attempts, now, leaseUntil), renewEffect(effect, holder, holder.attempts, now, leaseUntil), (renewed) => renewed);
}

// ── a step's record and its count, in one write ─────────────────────────────────────────────

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
export function withCount<R>(step: Step<R> | ItemsStep<R>, run: Current<RunRecord>, count: StepCount): ItemsStep<R> {
  if ('keep' in step || 'fail' in step) return step;
  const writes = 'write' in step ? [step.write] : step.writes;
  const counted = countStep(run, count.stepKey, count.deltas, count.calls);
  return { writes: [...writes, 'write' in counted ? counted.write : null], answer: step.answer };
}

/** `recordCall` and its step's count in one write (withCount). */
export function recordCallCounted(call: Current<ToolCallRecord>, run: Current<RunRecord>, entry: ToolCallRecord & { status: 'completed' }, now: Date, count: StepCount): ItemsStep<Recorded> {
  return withCount(recordCall(call, entry, now), run, count);
}

/** `completeCall` — with the effect it holds, `completeCallEffect` — and its step's count in one write (withCount). */
export function completeCallCounted(
  call: Current<ToolCallRecord>,
  effect: { current: Current<EffectRecord>; holder: EffectOf } | undefined,
  run: Current<RunRecord>,
  key: Key,
  runId: string,
  outcome: EffectOutcome,
  now: Date,
  count: StepCount,
): ItemsStep<ToolCallRecord> {
  const { unknown: _unknown, ...callOutcome } = outcome;
  const completed = effect ? completeCallEffect(call, effect.current, key, effect.holder, outcome, now) : completeCall(call, key, runId, callOutcome, now);
  return withCount(completed, run, count);
}

/** `recordTurn` and its step's count in one write (withCount); `count` is the count of the turn it records. */
export function recordTurnCounted(current: Current<TurnRecord>, run: Current<RunRecord>, turn: TurnRecord, now: Date, count: StepCount): ItemsStep<TurnRecord> {
  return withCount(recordTurn(current, turn, now), run, count);
}

// ── the index attributes, from the record ───────────────────────────────────────────────────

/** In the pending-approvals index: an approval while it is pending, or its decision while `undelivered` (listed apart). */
export const isPendingApproval = (record: Record<string, unknown>) => record['kind'] === 'approval' && (record['status'] === 'pending' || record['undelivered'] === true);
/** In the running-runs index: a run while it runs. */
export const isRunningRun = (record: Record<string, unknown>) => record['kind'] === 'run' && record['status'] === 'running';
