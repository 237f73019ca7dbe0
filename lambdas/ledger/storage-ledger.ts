import { LedgerIndexes, PENDING, RUNNING } from './dynamodb-item.js';
import { checkStepWant, type DamagedRunOptions, type EffectResolving, type Ledger, type RunEnd, type RunEndExpected } from './ledger.js';
import * as protocol from './protocol.js';
import * as approvalProtocol from './approval-protocol.js';
import { recordTurnSeen } from './turn-seen.js';
import { allOf as all, andThen as then, type Maybe } from './maybe.js';
import type { ItemWrite, StorageCall } from './storage-call.js';
import { claimOnBasis, handedChecks, sealedAsHanded, seenWith, versionsOf, type EngineVersions, type HandedStore } from './handed-versions.js';
import { openCalls, openTurnCalls } from './open-turn.js';
import { aggregateKey, approvalKey, blobKey, breakerKey, callKey, effectBlobKey, effectKey, GLOBAL_KILL, turnKey, type ItemsStep, type Key, type PairStep, type Step, type Stored } from './protocol.js';
import * as pruning from './pruning.js';
import { reserveAggregate } from './aggregates.js';
import { finishRun } from './run-end.js';
import { fleetKey, leaseAndReserve, leaseKeys, leaseToReturn, returnLease } from './fleet-leases.js';
import { closeChildRun } from './child-settle.js';
import { fleetDay } from '../records/fleet.js';
import { effectApprovalKey, shareApproval } from './effect-approvals.js';
import { type ItemDelete, type PruneRecords, type Pruning, type RunItem } from './pruning.js';
import { retentionOn } from './retention.js';
import { budgetApprovalSk, childWaitKey, executionRunKey, runKey, tokenKey, turnSk } from '../records/ledger-records.js';
import { TransientError, type LedgerIntegrityError } from '../shared/errors.js';
import { mapBounded } from '../shared/bounded-map.js';
import { newestFirst, type RunPlace } from '../records/run-order.js';
import type { ApprovalRecord, KillFlag, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';

type ApprovalKey = Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>;

export type { ItemWrite, StorageCall } from './storage-call.js';

/** Index names and partitions the engines query (the DynamoDB GSIs; the embedded engine's maps). */
const INDEX_QUERIES = {
  pendingApprovals: { index: LedgerIndexes.pendingApprovals, partition: PENDING },
  runningRuns: { index: LedgerIndexes.runningRuns, partition: RUNNING },
} as const;

/**
 * The `Ledger` over a storage engine: every method is a read, a transition of protocol.ts and a
 * conditional put (or a query). An engine implements only the primitives below, the way
 * Powertools' idempotency `BasePersistenceLayer` leaves a backend its four methods.
 */
export abstract class StorageLedger implements Ledger, Pruning, EffectResolving {
  /** The update of each item in progress in this instance, by `pk|sk` (see `update`). */
  private readonly updating = new Map<string, Promise<void>>();
  private guard?: (call: StorageCall) => void;

  /**
   * Sets the check every storage call of this instance passes first; it throws to refuse the call
   * (the call is then not made). Synchronous, so that the embedded engine's updates stay one
   * synchronous section.
   */
  guardStorage(guard: ((call: StorageCall) => void) | undefined): void {
    this.guard = guard;
  }

  /** Runs the guard on a call an engine makes beyond the primitives (a prune's deletes and reads). */
  protected guarded(call: StorageCall): void {
    this.guard?.(call);
  }

  // ── the primitives ──────────────────────────────────────────────────────────────────────

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
  /**
   * At least the newest `limit` run records of every agent, damaged ones named to `onDamaged`; the
   * engine guards the storage calls it makes for them (a scan, or its index's queries).
   */
  protected abstract newestRunRecords(limit: number, options: DamagedRunOptions): Promise<RunRecord[]>;
  /** The run records whose status is `running`, damaged ones named to `onDamaged`. */
  protected abstract queryRunning(options: DamagedRunOptions): Promise<RunRecord[]>;
  /** The newest `limit` runs of `agent` (DynamoDB: the `runsByAgent` index). */
  protected abstract queryRunsOf(agent: string, limit: number, options: DamagedRunOptions & { notAfter?: string }): Promise<RunRecord[]>;
  /** The key of the approval with this id (the byApprovalId index). */
  protected abstract approvalById(approvalId: string): Maybe<Key | undefined>;
  /** The pending approvals (the pendingApprovals index). */
  protected abstract queryPendingApprovals(): Promise<ApprovalRecord[]>;
  /** The business keys of every effect the store holds (a scan; their records are read apart). */
  protected abstract effectKeys(): Promise<string[]>;
  /** Stores a large value's chunks, chunk `i` at `keys[i]` (a run's blobKey, an effect's effectBlobKey). */
  protected abstract writeBlob(keys: readonly Key[], chunks: readonly string[]): Promise<void>;
  /** A large value's chunks, in order: the items of partition `pk` whose sort key starts with `prefix` (one query). */
  protected abstract readBlob(pk: string, prefix: string): Promise<string[]>;
  /** Stores a task token apart from its approval (tokenKey). */
  protected abstract putTaskToken(key: Key, taskToken: string): Maybe<void>;
  /** The task token of an approval (tokenKey). */
  protected abstract readTaskToken(key: Key): Promise<string | undefined>;
  /**
   * The items a run owns (pruning.ts `runPartitions`: its partition, its task tokens', its
   * blobs'), in that order and each in key order, as stored (pruning.ts `RunItem`); with `first`,
   * at most that many of its own partition's and none of the others (whether the run is still
   * there). Task tokens may be given by the keys their approvals name, unread (a token is a capability).
   */
  protected abstract queryRunItems(runId: string, first?: number): Maybe<RunItem[]>;
  /** Deletes items, each on its condition (pruning.ts `ItemDelete`); which were deleted, in order. */
  protected abstract deleteItems(deletes: readonly ItemDelete[]): Maybe<boolean[]>;
  /**
   * The wait before attempt `attempt + 1` of a contended update (`ItemsOptions.contended`) whose write failed its
   * condition: none on an engine whose writers take turns in one process (the embedded one); DynamoDB's a jittered, growing time.
   */
  protected backoff(_attempt: number): Maybe<void> {
    return undefined;
  }
  /** How this engine names and checks an item's version, for writes on the versions a step was handed (handed-versions.ts). */
  protected abstract readonly versions: EngineVersions;
  private readonly handedSealed = handedChecks();
  private handedStore(): HandedStore {
    return { versions: this.versions, guard: (call) => this.guard?.(call), known: (key) => this.readForUpdate(key, false, true), fresh: (key) => this.readForUpdate(key, true, false), sealed: this.handedSealed };
  }

  // async: a refused call is a rejected promise, as the engine's own failure would be.
  readonly listPendingApprovals: Ledger['listPendingApprovals'] = async (options = {}) => {
    this.guard?.({ query: INDEX_QUERIES.pendingApprovals });
    // The index holds the decisions still owed to their executions too (protocol.ts isPendingApproval).
    const listed = await this.queryPendingApprovals();
    return options.undelivered ? listed : listed.filter((approval) => approval.status === 'pending');
  };
  readonly putBlob: Ledger['putBlob'] = (runId, digest, chunks) => this.putChunks((index) => blobKey(runId, digest, index), chunks);
  readonly getBlob: Ledger['getBlob'] = (runId, digest) => this.getChunks(blobKey(runId, digest, 0));
  readonly putEffectBlob: Ledger['putEffectBlob'] = (key, digest, chunks) => this.putChunks((index) => effectBlobKey(key, digest, index), chunks);
  readonly getEffectBlob: Ledger['getEffectBlob'] = (key, digest) => this.getChunks(effectBlobKey(key, digest, 0));
  private async putChunks(keyOf: (index: number) => Key, chunks: readonly string[]): Promise<void> {
    const keys = chunks.map((_, index) => keyOf(index));
    this.guard?.({ put: keys });
    return this.writeBlob(keys, chunks);
  }
  /** The chunks of the value whose first chunk is at `first`: its partition's items under the same prefix (the key without the chunk's index). */
  private async getChunks(first: Key): Promise<string[]> {
    this.guard?.({ query: { pk: first.pk } });
    return this.readBlob(first.pk, first.sk.slice(0, first.sk.lastIndexOf('#') + 1));
  }
  readonly getTaskToken: Ledger['getTaskToken'] = async (key) => {
    this.guard?.({ read: [tokenKey(key)] });
    return this.readTaskToken(tokenKey(key));
  };
  readonly storeChildWait: Ledger['storeChildWait'] = async (wait, taskToken) => {
    this.guard?.({ put: [childWaitKey(wait)] });
    await this.putTaskToken(childWaitKey(wait), taskToken);
  };
  readonly getChildWait: Ledger['getChildWait'] = async (wait) => {
    this.guard?.({ read: [childWaitKey(wait)] });
    return this.readTaskToken(childWaitKey(wait));
  };
  // A string at a key of its own, as a task token is (the same primitives).
  readonly noteExecutionRun: Ledger['noteExecutionRun'] = async (executionArn, runId) => {
    this.guard?.({ put: [executionRunKey(executionArn)] });
    await this.putTaskToken(executionRunKey(executionArn), runId);
  };
  readonly runOfExecution: Ledger['runOfExecution'] = async (executionArn) => {
    this.guard?.({ read: [executionRunKey(executionArn)] });
    return this.readTaskToken(executionRunKey(executionArn));
  };

  // ── running a transition ────────────────────────────────────────────────────────────────

  /**
   * Runs `transition` on the item at `key` and puts what it writes, on the condition that the
   * item is still the one it read; when another writer came first, it runs again on what is there
   * now. Updates of one item from this instance take turns (each starts from the last one's item):
   * concurrent writers here cost one round trip each, not a storm of failed conditions. An engine
   * whose primitives answer at once (the embedded one) runs the whole update in one synchronous
   * section: it is done when the method returns its promise.
   */
  protected update<R>(key: Key, transition: Transition<R>, likelyAbsent = false): Promise<R> {
    return this.inTurn(key, () => this.updateNow(key, transition, likelyAbsent, 0));
  }

  /** Runs `work` after this instance's update of `key` in progress, if any (see `update`). */
  private inTurn<R>(key: Key, work: () => Maybe<R>): Promise<R> {
    const id = `${key.pk}|${key.sk}`;
    const before = this.updating.get(id);
    let result: Maybe<R>;
    try {
      result = before ? before.then(work) : work();
    } catch (error) {
      return Promise.reject(error as Error);
    }
    if (!(result instanceof Promise)) return Promise.resolve(result);
    const settled = result.then(() => undefined, () => undefined);
    this.updating.set(id, settled);
    void settled.then(() => {
      if (this.updating.get(id) === settled) this.updating.delete(id);
    });
    return result;
  }

  /**
   * `update` over several items (a tool call and its effect; a record and the run item that counts
   * it): the transition reads them all, and what it writes is written as one (`putItems`), on the
   * condition that none it writes or checks changed since it was read; when another writer came
   * first, it runs again on all of them. One item to write and none to check is a plain put.
   * Updates from this instance take turns on the last item (the one shared most widely: the effect
   * claimed across runs, the run item every step counts on).
   */
  protected updateItems<R>(keys: readonly Key[], transition: ItemsTransition<R>, options: ItemsOptions = {}): Promise<R> {
    return this.inTurn(keys.at(-1)!, () => this.updateItemsNow(keys, transition, options, 0));
  }

  private updateItemsNow<R>(keys: readonly Key[], transition: ItemsTransition<R>, options: ItemsOptions, attempt: number): Maybe<R> {
    const { likelyAbsent = [], order } = options;
    const fresh = attempt > 0;
    const reads = keys.map((key, index) => {
      const absent = likelyAbsent[index] === true && !fresh;
      if (!absent) this.guard?.({ read: [key] });
      return this.readForUpdate(key, fresh, absent);
    });
    return then(all(reads), (currents) => {
      const step = transition(currents as (Stored<never> | undefined)[]);
      if ('fail' in step) throw step.fail;
      if ('keep' in step) return step.keep;
      const indexes = order ?? keys.map((_, index) => index);
      // An item left out (null) is neither written nor checked.
      const writes = indexes.filter((index) => step.writes[index] !== null).map((index) => ({ key: keys[index]!, item: step.writes[index] ?? undefined, expected: currents[index] }));
      const written = (ok: boolean): Maybe<R> => {
        if (ok) return step.answer;
        const what = `${keys.map((key) => `${key.pk}/${key.sk}`).join(' and ')}: still changing after ${attempt + 1} attempts`;
        if (!options.contended) {
          if (attempt >= 20) throw new protocol.ConditionalWriteError(what);
          return this.updateItemsNow(keys, transition, options, attempt + 1);
        }
        // Past its attempts, a transient failure: the state machine retries the step with backoff.
        if (attempt >= CONTENDED_ATTEMPTS) throw new TransientError(what);
        return then(this.backoff(attempt), () => this.updateItemsNow(keys, transition, options, attempt + 1));
      };
      const put = writes.filter((write) => write.item);
      this.guard?.({ put: put.map((write) => write.key), items: put.map((write) => write.item!) });
      if (writes.length === 1 && put.length === 1) return then(this.put(put[0]!.key, put[0]!.item!, put[0]!.expected), written);
      // One TransactWriteItems on DynamoDB, authorized action by action: a Put per item written, a ConditionCheck per item only checked.
      const checked = writes.filter((write) => !write.item);
      if (checked.length > 0) this.guard?.({ check: checked.map((write) => write.key) });
      return then(this.putItems(writes), written);
    });
  }

  /** `updateItems` over a tool call and its effect. */
  protected updatePair<R>(keys: readonly [Key, Key], transition: PairTransition<R>, options: PairOptions = {}): Promise<R> {
    const { likelyAbsent, order = 'first first' } = options;
    return this.updateItems(keys, ([first, second]) => transition(first, second), { ...(likelyAbsent && { likelyAbsent }), ...(order === 'second first' && { order: [1, 0] }) });
  }

  private updateNow<R>(key: Key, transition: Transition<R>, likelyAbsent: boolean, attempt: number): Maybe<R> {
    const fresh = attempt > 0;
    // A record written once is put at once, unread (the DynamoDB engine makes no GetItem for it).
    if (fresh || !(likelyAbsent && attempt === 0)) this.guard?.({ read: [key] });
    return then(this.readForUpdate(key, fresh, likelyAbsent && attempt === 0), (current) => {
      const step = transition(current as Stored<never> | undefined);
      if ('fail' in step) throw step.fail;
      if ('keep' in step) return step.keep;
      this.guard?.({ put: [key], items: [step.write] });
      return then(this.put(key, step.write, current), (written) => {
        if (written) return step.answer;
        if (attempt >= 20) throw new protocol.ConditionalWriteError(`${key.pk}/${key.sk}: still changing after ${attempt + 1} attempts`);
        return this.updateNow(key, transition, likelyAbsent, attempt + 1);
      });
    });
  }

  private async record<T>(key: Key): Promise<T | undefined> {
    return (await this.readGuarded([key]))[0]?.record as T | undefined;
  }

  private readGuarded(keys: readonly Key[]): Maybe<(Stored | undefined)[]> {
    this.guard?.({ read: keys });
    return this.read(keys);
  }

  // ── runs ────────────────────────────────────────────────────────────────────────────────
  // Each method: the item it reads, the rule of protocol.ts, and the item's key (with `true`: a
  // record written once, likely absent).

  // The item a prune left for the run id (pruning.ts prunedRunKey), if any.
  readonly prunedRun: Ledger['prunedRun'] = async (runId) => {
    const pruned = await this.record<pruning.PrunedRunRecord>(pruning.prunedRunKey(runId));
    return pruned && { prunedAt: pruned.prunedAt };
  };
  // With the item that would say its id was pruned (checked absent: a ConditionCheck beside the put); both likely absent, so a new run reads nothing first.
  readonly createRun: Ledger['createRun'] = async (run) => {
    try {
      return await this.updateItems([pruning.prunedRunKey(run.runId), runKey(run.runId)], ([pruned, current]) => pruning.createRunUnlessPruned(pruned, protocol.createRun(current, run, new Date()), run.runId), { likelyAbsent: [true, true] });
    } catch (error) {
      // A role without the grant of that check (a template from before 0.18.0, which the twin runs
      // this code on: test/versions/upgrade.test.ts) is refused it: the run is created as it was then.
      if ((error as Error).name !== 'AccessDeniedException') throw error;
      return this.update(runKey(run.runId), (current) => protocol.createRun(current, run, new Date()), true);
    }
  };
  readonly getRun: Ledger['getRun'] = (runId) => this.record(runKey(runId));
  readonly listRuns: Ledger['listRuns'] = async (limit = 100, options = {}) => newestRuns(await this.newestRunRecords(limit, options), limit);
  readonly listRunsOf: Ledger['listRunsOf'] = async (agent, limit = 100, options = {}) => {
    this.guard?.({ query: { index: LedgerIndexes.runsByAgent, partition: agent } });
    return newestRuns(await this.queryRunsOf(agent, limit, options), limit);
  };
  readonly listRunningRuns: Ledger['listRunningRuns'] = async (options = {}) => {
    this.guard?.({ query: INDEX_QUERIES.runningRuns });
    return newestRuns((await this.queryRunning(options)).filter((run) => run.status === 'running'));
  };
  readonly attachExecution: Ledger['attachExecution'] = (runId, executionArn, now, options = {}) =>
    this.update(runKey(runId), (current) => protocol.attachExecution(current, runId, executionArn, now, options));
  readonly recordRecovery: Ledger['recordRecovery'] = (runId, recovery, expected) => this.update(runKey(runId), (current) => protocol.recordRecovery(current, recovery, expected));
  readonly finishRun = (async (runId: string, outcome: RunEnd, now: Date, expected?: RunEndExpected) => {
    this.guard?.({ read: [runKey(runId)] });
    const run = (await this.readForUpdate(runKey(runId), false, false))?.record as RunRecord | undefined;
    const calls = run ? await openTurnCalls(this, run) : [];
    return this.update(runKey(runId), (current) => finishRun(current, runId, outcome, now, { ...(current && { calls: openCalls(current.record as RunRecord, calls) }), ...(expected && { expected }) }));
  }) as Ledger['finishRun'];

  // ── guards ──────────────────────────────────────────────────────────────────────────────

  readonly killRun: Ledger['killRun'] = (runId, flag) => this.update(runKey(runId), (current) => protocol.killRun(current, flag));
  readonly getGlobalKill: Ledger['getGlobalKill'] = async () => (await this.record<{ flag?: KillFlag }>(GLOBAL_KILL))?.flag;
  readonly setGlobalKill: Ledger['setGlobalKill'] = async (flag) => {
    const item = protocol.setGlobalKill(flag);
    this.guard?.({ put: [GLOBAL_KILL], items: [item] });
    await this.put(GLOBAL_KILL, item, 'any');
  };
  readonly recordFork: Ledger['recordFork'] = (runId, fork) => this.update(runKey(runId), (current) => protocol.recordFork(current, fork));
  readonly recordGuardEvent: Ledger['recordGuardEvent'] = (runId, event) => this.update(runKey(runId), (current) => protocol.recordGuardEvent(current, event));
  readonly closeChildRun: Ledger['closeChildRun'] = (runId, now) => this.update(runKey(runId), (current) => closeChildRun(current, now));
  readonly countStep: Ledger['countStep'] = (runId, stepKey, deltas, calls) => this.update(runKey(runId), (current) => protocol.countStep(current, stepKey, deltas, calls));
  readonly applyBudgetExtension: Ledger['applyBudgetExtension'] = (runId, guard, extension, limit) =>
    this.update(runKey(runId), (current) => protocol.applyBudgetExtension(current, runId, guard, extension, limit));
  readonly getBreaker: Ledger['getBreaker'] = async (name) => protocol.breakerOf(await this.record(breakerKey(name)));
  readonly saveBreaker: Ledger['saveBreaker'] = (next) => this.update(breakerKey(next.name), (current) => protocol.saveBreaker(current, next));

  // ── turns ───────────────────────────────────────────────────────────────────────────────

  readonly recordTurn: Ledger['recordTurn'] = (turn, count) => {
    const key = turnKey(turn.runId, turn.turn);
    if (!count) return this.update(key, (current) => protocol.recordTurn(current, turn, new Date()), true);
    const { seen: tell, handing, ...stepCount } = count;
    // With `seen`, the kill item is checked in the write too (its basis the step's own read: no
    // request more); with `handing`, it is not (the turn's calls check it at their own write).
    const keys = [key, runKey(turn.runId), ...(tell ? [GLOBAL_KILL] : [])];
    let items: readonly [Stored | undefined, Stored | undefined] = [undefined, undefined];
    const transition = ([current, run, kill]: (Stored<never> | undefined)[]) => {
      const step = tell ? recordTurnSeen([current, run, kill], turn, new Date(), stepCount) : protocol.recordTurnCounted(current, run, turn, new Date(), stepCount);
      items = ['writes' in step ? (step.writes[1] ?? undefined) : undefined, kill];
      return step;
    };
    const stored = this.updateItems(keys, transition, { likelyAbsent: [true, false, false] });
    const told = tell ?? handing;
    if (!told) return stored;
    // Told by the write that counted the turn: the kill item as checked, or as known without a request.
    return stored.then(async (record) => {
      const [run, kill] = items;
      if (run) told(await seenWith(this.versions, run, tell ? kill : await this.readForUpdate(GLOBAL_KILL, false, true), record, this.handedSealed));
      return record;
    });
  };
  readonly getTurn: Ledger['getTurn'] = (runId, turn) => this.record(turnKey(runId, turn));

  readonly listConversation: Ledger['listConversation'] = async (runId, options = {}) => {
    const conversation: Awaited<ReturnType<Ledger['listConversation']>> = { turns: [], calls: [], approvals: [] };
    // The whole partition sorts in conversation order (TURN#0001, TURN#0001#CALL#01, …); budget
    // approvals (BUDGET#…) and the run record are told apart by their kind. From a turn on: only
    // the keys from TURN#<n> (BUDGET# and RUN sort before every TURN#).
    this.guard?.({ query: { pk: runKey(runId).pk } });
    for (const { record } of await this.queryPartition(runKey(runId).pk, options.fromTurn === undefined ? undefined : turnSk(options.fromTurn))) {
      if (record['kind'] === 'turn') conversation.turns.push(record as unknown as TurnRecord);
      else if (record['kind'] === 'tool') conversation.calls.push(record as unknown as ToolCallRecord);
      else if (record['kind'] === 'approval') conversation.approvals.push(record as unknown as ApprovalRecord);
      // The run item came with the query (its partition's first key): its reader needs no GetItem of it.
      else if (record['kind'] === 'run') conversation.run = record as unknown as RunRecord;
    }
    return conversation;
  };

  readonly loadStep: Ledger['loadStep'] = async (runId, want = {}) => {
    checkStepWant(want);
    const turns = (want.turns ?? []).map((turn) => turnKey(runId, turn));
    const calls = (want.calls ?? []).map(({ turn, call }) => callKey(runId, turn, call));
    const keys = [runKey(runId), GLOBAL_KILL, ...turns, ...calls, ...(want.breaker === undefined ? [] : [breakerKey(want.breaker)]), ...(want.handedBreaker === undefined ? [] : [breakerKey(want.handedBreaker)])];
    const items = await this.readGuarded(keys);
    const found = items.map((item) => item?.record);
    const [run, kill] = found;
    // What a claim on this read checks (claimOnBasis): the versions of the two items as found.
    const versions = want.versions && items[0] ? versionsOf(this.versions, items[0], items[1]) : undefined;
    const present = <T>(records: unknown[]) => records.filter((record) => record !== undefined) as T[];
    const globalKill = (kill as { flag?: KillFlag } | undefined)?.flag;
    const at = 2 + turns.length + calls.length;
    const breaker = want.breaker === undefined ? undefined : protocol.breakerOf(found[at]);
    const handedBreaker = want.handedBreaker === undefined ? undefined : protocol.breakerOf(found.at(-1));
    return {
      ...(run && { run: run as unknown as RunRecord }),
      ...(globalKill && { globalKill }),
      turns: present<TurnRecord>(found.slice(2, 2 + turns.length)),
      calls: present<ToolCallRecord>(found.slice(2 + turns.length, 2 + turns.length + calls.length)),
      ...(breaker && { breaker }),
      ...(handedBreaker && { handedBreaker }),
      ...(versions && { versions }),
    };
  };

  // ── tool calls ──────────────────────────────────────────────────────────────────────────

  readonly getCall: Ledger['getCall'] = (runId, turn, call) => this.record(callKey(runId, turn, call));
  readonly claimCall: Ledger['claimCall'] = (call, now, effect, basis) => {
    const key = callKey(call.runId, call.turn, call.call);
    if (basis) return this.inTurn(runKey(call.runId), () => claimOnBasis(this.handedStore(), call, now, effect, basis));
    if (!effect) return this.update(key, (current) => protocol.claimCall(current, call, now));
    // The effect is likely unclaimed: put at once (a failed condition reads it).
    return this.updatePair([key, effectKey(effect.key)], (current, held) => protocol.claimCallEffect(current, held, call, effect, now), { likelyAbsent: [false, true] });
  };
  readonly checkHanded: Ledger['checkHanded'] = async (runId, basis) => sealedAsHanded(this.handedStore(), runId, basis);
  readonly recordCall: Ledger['recordCall'] = (call, now, count, basis) => {
    const key = callKey(call.runId, call.turn, call.call);
    // Handed its turn's state: checked against its seal, then put as any read's record, unread.
    if (!count && basis) return this.checkHanded(call.runId, basis).then(() => this.update(key, (current) => protocol.recordCall(current, call, now), true));
    if (!count) return this.update(key, (current) => protocol.recordCall(current, call, now));
    // The run item's line after the call's (the embedded log): a crash between them leaves a recorded call that the retry counts.
    return this.updateItems([key, runKey(call.runId)], ([current, run]) => protocol.recordCallCounted(current, run, call, now, count));
  };
  readonly completeCall: Ledger['completeCall'] = ({ runId, turn, call, outcome, now, effect, count }) => {
    const key = callKey(runId, turn, call);
    const holder = effect && { key: effect.key, runId, turn, call };
    const recorded = { ...outcome, ...(effect?.unknown && { unknown: true }) };
    if (count) {
      // Lines: the effect's, the call's, the run item's — each crash between them leaves a state the retry takes up (below).
      if (!holder) return this.updateItems([key, runKey(runId)], ([current, run]) => protocol.completeCallCounted(current, undefined, run, key, runId, recorded, now, count));
      return this.updateItems([key, effectKey(holder.key), runKey(runId)], ([current, held, run]) => protocol.completeCallCounted(current, { current: held, holder }, run, key, runId, recorded, now, count), { order: [1, 0, 2] });
    }
    if (!holder) return this.update(key, (current) => protocol.completeCall(current, key, runId, outcome, now));
    // The effect's line before the call's (the embedded log): a crash between them finds the effect completed.
    return this.updatePair([key, effectKey(holder.key)], (current, held) => protocol.completeCallEffect(current, held, key, holder, recorded, now), { order: 'second first' });
  };
  readonly releaseCall: Ledger['releaseCall'] = (runId, turn, call, now, { effect, unsent } = {}) => {
    const key = callKey(runId, turn, call);
    if (!effect) return this.update(key, (current) => protocol.releaseCall(current, now, unsent));
    return this.updatePair([key, effectKey(effect.key)], (current, held) => protocol.releaseCallEffect(current, held, { key: effect.key, runId, turn, call }, now, unsent), { order: 'second first' });
  };
  readonly renewCall: Ledger['renewCall'] = ({ runId, turn, call, attempts, now, leaseUntil, effect }) => {
    const key = callKey(runId, turn, call);
    if (!effect) return this.update(key, (current) => protocol.renewCall(current, attempts, now, leaseUntil));
    const holder = { key: effect.key, runId, turn, call, attempts: effect.attempts };
    return this.updatePair([key, effectKey(effect.key)], (current, held) => protocol.renewCallEffect(current, held, holder, attempts, now, leaseUntil));
  };

  // ── effects claimed across runs ─────────────────────────────────────────────────────────

  readonly getEffect: Ledger['getEffect'] = (key) => this.record(effectKey(key));
  // A person's, not a step's (EffectResolving): each effect read itself, verified, after the scan of their keys, EFFECT_READS_AT_ONCE at a time.
  readonly listEffects: EffectResolving['listEffects'] = async () => {
    const effects = await mapBounded(await this.effectKeys(), EFFECT_READS_AT_ONCE, (key) => this.getEffect(key));
    return effects.filter((effect) => effect !== undefined);
  };
  readonly resolveEffect: EffectResolving['resolveEffect'] = (key, request, now) => this.update(effectKey(key), (current) => protocol.resolveEffect(current, key, request, now));
  readonly getAggregate: Ledger['getAggregate'] = (key) => this.record(aggregateKey(key));
  readonly reserveAggregate: Ledger['reserveAggregate'] = (reservation, now) =>
    this.update(aggregateKey(reservation.key), (current) => reserveAggregate(current, reservation, now), true);

  // ── a fleet budget's leases (fleet-leases.ts) ─────────────────────────────────────────────

  // Each one synchronous section on the embedded engine (then): the run item read, then the update.
  readonly reserveInFleet: Ledger['reserveInFleet'] = async (request, now) => {
    const day = fleetDay(now);
    const run = runKey(request.runId);
    // The run's own item first: most calls fit in the lease the run holds, and read no counter.
    // The counters last: this instance's leases take turns on the most shared item (inTurn), and
    // writers elsewhere back off (`contended`): a day's first leases race for one item.
    return then(this.readGuarded([run]), ([current]) => {
      const counters = leaseKeys(current as Stored<RunRecord> | undefined, request, day);
      return this.updateItems([run, ...counters.map(fleetKey)], (currents) => leaseAndReserve(currents, counters, request, day, now), { contended: counters.length > 0 });
    });
  };
  readonly returnFleetLease: Ledger['returnFleetLease'] = async (runId, now) =>
    then(this.readGuarded([runKey(runId)]), ([current]) => {
      const counters = leaseToReturn(current?.record as RunRecord | undefined);
      return counters.length === 0 ? 0 : this.updateItems([runKey(runId), ...counters.map(fleetKey)], (currents) => returnLease(currents, counters, runId, now), { contended: true });
    });
  readonly getFleetDay: Ledger['getFleetDay'] = (pk) => this.record(fleetKey(pk));

  readonly getEffectApproval: Ledger['getEffectApproval'] = (key) => this.record(effectApprovalKey(key));
  readonly shareApproval: Ledger['shareApproval'] = (request, now) =>
    this.update(effectApprovalKey(request.key), (current) => shareApproval(current, request, now), true);

  // ── approvals ───────────────────────────────────────────────────────────────────────────

  readonly upsertApproval: Ledger['upsertApproval'] = async (approval, taskToken) => {
    const key = approvalKey(approval);
    // The token first: an approval someone can see and decide always has a token to wake. What
    // was read is the basis of the update below (a conditional put: one read, not two).
    const stored = then(this.readGuarded([key]), ([current]) => {
      if (!approvalProtocol.tokenWanted(current as Stored<ApprovalRecord> | undefined)) return false;
      this.guard?.({ put: [tokenKey(approval)] });
      return this.putTaskToken(tokenKey(approval), taskToken);
    });
    return then(stored, () => this.update(key, (current) => approvalProtocol.upsertApproval(current, approval, new Date())));
  };

  readonly getApproval: Ledger['getApproval'] = (runId, turn, call) => this.record(approvalKey({ runId, turn, call }));
  readonly getBudgetApproval: Ledger['getBudgetApproval'] = (runId, guard, extension) => this.record({ pk: runKey(runId).pk, sk: budgetApprovalSk(guard, extension) });
  // An index may lag behind its table: the item itself is read for its current status.
  readonly findApproval: Ledger['findApproval'] = async (approvalId) => {
    this.guard?.({ query: { index: LedgerIndexes.byApprovalId, partition: approvalId } });
    return then(this.approvalById(approvalId), (key) => key && this.record<ApprovalRecord>(key));
  };
  readonly decideApproval: Ledger['decideApproval'] = (key, decision, now) => this.update(approvalKey(key), (current) => approvalProtocol.decideApproval(current, key, decision, now));
  readonly recordFirstApproval: Ledger['recordFirstApproval'] = (key, first, linkId) =>
    this.update(approvalKey(key), (current) => approvalProtocol.recordFirstApproval(current, key, first, linkId));
  readonly markDelivered: Ledger['markDelivered'] = (key) => this.update(approvalKey(key), (current) => approvalProtocol.markDelivered(current));

  // ── retention (`savepoint prune`): pruning.ts's procedure, run on this engine's primitives (retention.ts) ──
  private readonly retention = retentionOn({
    guard: (call) => this.guard?.(call),
    read: (keys) => this.read(keys),
    put: (key, item, expected) => this.put(key, item, expected),
    queryPartition: (pk, fromSk, onDamaged) => this.queryPartition(pk, fromSk, onDamaged),
    queryRunItems: (runId, first) => this.queryRunItems(runId, first),
    deleteItems: (deletes) => this.deleteItems(deletes),
    listRuns: (limit, options) => this.listRuns(limit, options),
    listPendingApprovals: () => this.listPendingApprovals(),
  });
  readonly prune: Pruning['prune'] = (finishedBefore, now) => this.retention.prune(finishedBefore, now);
  readonly planPrune: Pruning['planPrune'] = (finishedBefore) => this.retention.planPrune(finishedBefore);
  readonly prunes: Pruning['prunes'] = (onDamaged) => this.retention.prunes(onDamaged);
  readonly verifyPrunes: Pruning['verifyPrunes'] = () => this.retention.verifyPrunes();
}

/** The attempts of a contended update before it fails as transient (`ItemsOptions.contended`). */
const CONTENDED_ATTEMPTS = 40;
/** The effects `listEffects` reads at once, a GetItem each on DynamoDB: a table's thousands at once are a burst it may throttle. */
export const EFFECT_READS_AT_ONCE = 16;
/** `never`: each transition reads the record type of its own rule. */
type Transition<R> = (current: Stored<never> | undefined) => Step<R>;
type PairTransition<R> = (first: Stored<never> | undefined, second: Stored<never> | undefined) => PairStep<R>;
type ItemsTransition<R> = (currents: (Stored<never> | undefined)[]) => ItemsStep<R>;
type ItemsOptions = {
  /** Per item: a record likely absent, not read before the write (as `update`'s `likelyAbsent`). */
  readonly likelyAbsent?: readonly boolean[];
  /** The order, by index, an engine that writes the items one after the other writes them in (the embedded log's lines). @default the keys' order */
  readonly order?: readonly number[];
  /**
   * An item many writers race for (a fleet budget's counter of the day): more attempts, each after
   * the engine's `backoff`, so that racing writers spread out instead of failing in a storm.
   * @default false
   */
  readonly contended?: boolean;
};
type PairOptions = {
  /** Per item: a record likely absent, not read before the write (as `update`'s `likelyAbsent`). */
  readonly likelyAbsent?: readonly [boolean, boolean];
  /** The order an engine that writes the items one after the other writes them in (the embedded log's lines). */
  readonly order?: 'first first' | 'second first';
};


/**
 * The newest `limit` of `runs`, newest first in the one order of runs (`newestFirst`: by creation
 * time, then runs of the same instant by run id, as the runs API pages them; a scan's order,
 * DynamoDB's, is not a tie-break).
 */
export function newestRuns<T extends RunPlace>(runs: T[], limit = runs.length): T[] {
  return runs.sort(newestFirst).slice(0, limit);
}

/**
 * The ledger's retention, when it keeps prune records: both storage engines do (the embedded
 * ledger opened here, the DynamoDB one); the running engine's embedded ledger, reached over
 * loopback, does not (the engine owns it).
 */
export function pruningOf(ledger: Ledger): Pruning | undefined {
  return ledger instanceof StorageLedger ? ledger : undefined;
}

/** What `pruningOf` answers to a reader, of any ledger that keeps prune records: a storage engine's, or a running engine's reached over loopback (remote-ledger.ts `RemoteLedger`). */
export function pruneRecordsOf(ledger: Ledger): PruneRecords | undefined {
  const records = ledger as Ledger & Partial<PruneRecords>;
  return typeof records.prunes === 'function' && typeof records.planPrune === 'function' ? (records as PruneRecords) : undefined;
}

/**
 * The ledger's listing and settling of business-key effects (`savepoint effects`), when it is a
 * storage engine's: the embedded ledger opened here, the DynamoDB one; not a running engine's
 * reached over loopback (the engine owns that ledger).
 */
export function effectResolvingOf(ledger: Ledger): EffectResolving | undefined {
  return ledger instanceof StorageLedger ? ledger : undefined;
}
