import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/lib-dynamodb';
import type { BreakerState } from '../guards/breaker.js';
import { checkStepWant, type ApprovalDecision, type AttachOptions, type Ledger, type DamagedRunOptions, type StepRead, type StepWant } from './ledger.js';
import {
  approvalSkOf,
  BUDGET_FIELDS,
  budgetApprovalSk,
  callSk,
  runKey,
  tokenKey,
  turnSk,
  type ApprovalRecord,
  type Counters,
  type ExtendableGuard,
  type GuardEvent,
  type KillFlag,
  type LedgerRecord,
  type RecoveryRecord,
  type RunRecord,
  type ToolCallRecord,
  type TurnRecord,
} from './records.js';
import type { LedgerSealer } from './seal.js';
import { LedgerIntegrityError } from '../shared/errors.js';

/** Names of the table's secondary indexes; infra/ creates them with the same constants. */
export const LedgerIndexes = {
  byApprovalId: 'byApprovalId',
  pendingApprovals: 'pendingApprovals',
  /**
   * The runs marked `running` (sparse: `runningRun` is set while the status is `running` and
   * removed when the run ends), so the sweeper queries instead of scanning the table.
   */
  runningRuns: 'runningRuns',
} as const;

/** The partition of the `runningRuns` index, on the run item while it runs. */
const RUNNING = 'RUNNING';

/** Ledger records expire (DynamoDB TTL on `expiresAt`, epoch seconds) this long after they are written. */
const RETENTION_SECONDS = 90 * 24 * 3600;

const PENDING = 'PENDING';
const GLOBAL_KILL = { pk: 'GLOBAL', sk: 'KILL' };
const breakerKey = (name: string) => ({ pk: `BREAKER#${name}`, sk: 'BREAKER' });

/**
 * The ledger on DynamoDB. It uses only single-item conditional writes (no transactions), which is
 * what the local emulator supports and what keeps each guard atomic on the real service.
 *
 * A side-effecting tool call, when the Lambda dies mid-call:
 *
 *   attempt 1: claimCall (in_flight, lease L) ─► provider POST, Idempotency-Key K ─► ✗ crash
 *   attempt 2: claimCall fails while the lease is live ─► Agent.LeaseHeld ─► Retry waits
 *   attempt 3: lease expired ─► claimCall takes over ─► provider POST with the same K
 *              ─► provider answers with the first refund ─► completeCall records it
 */
export class DynamoDbLedger implements Ledger {
  private readonly doc: DynamoDBDocumentClient;

  /**
   * The items this instance last read or wrote, verified, by `pk|sk`: the basis of its next
   * update. An update is a read-modify-write of the whole sealed item, conditional on the seal it
   * read; with the basis from the step's own `loadStep`, that is one round trip, as the UpdateItem
   * it replaces was. A stale basis (another writer came first) fails the condition: read again.
   */
  private readonly basis = new Map<string, Item | typeof ABSENT>();
  private loadedSealer?: Promise<LedgerSealer>;
  /** The update of each item in progress in this process, by `pk|sk` (see `update`). */
  private readonly updating = new Map<string, Promise<void>>();

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    /**
     * Seals every item written and verifies every item read (lambdas/ledger/seal.ts); on AWS a
     * function that loads the key from Secrets Manager on first use.
     */
    private readonly sealer: LedgerSealer | (() => Promise<LedgerSealer>),
  ) {
    // convertClassInstanceToMap: the SDK takes any object with an own `constructor` key (which a
    // model's tool input may have) for a class instance and refuses to marshall it. Records are
    // plain JSON data (times are ISO strings, as their types say), so every object is a map; the
    // price is that a stray class instance (a Date) would be stored as an empty map, not rejected.
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true } });
  }

  async createRun(run: RunRecord): Promise<boolean> {
    return this.putIfAbsent({ ...runKey(run.runId), ...run, ...(run.status === 'running' && { runningRun: RUNNING }) });
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.get<RunRecord>(runKey(runId));
  }

  async listRuns(limit = 100, options: DamagedRunOptions = {}): Promise<RunRecord[]> {
    // A scan is fine for the handful of runs a ledger holds per day; a `byKind` index is the
    // upgrade path when it is not.
    const items: RunRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: '#kind = :run',
          ExpressionAttributeNames: { '#kind': 'kind' },
          ExpressionAttributeValues: { ':run': 'run' },
          ExclusiveStartKey: start,
        }),
      );
      const sealer = await this.seals();
      for (const item of (page.Items ?? []) as Item[]) {
        const run = this.trusted(sealer, item, options);
        if (run) items.push(run as unknown as RunRecord);
      }
      start = page.LastEvaluatedKey;
    } while (start && items.length < limit);
    return items.sort((a, b) => b.createdAt.localeCompare(a.createdAt)).slice(0, limit).map(strip);
  }

  async attachExecution(
    runId: string,
    executionArn: string,
    now: Date,
    options: AttachOptions = {},
  ): Promise<RunRecord | undefined> {
    const { written, item } = await this.update(runKey(runId), (run) => {
      // Two executions resuming the same run at once: only the first to replace the dead one drives it.
      if (!run || (options.previousArn !== undefined && run['executionArn'] !== options.previousArn)) {
        if (options.previousArn !== undefined) return undefined;
        throw conditionFailed(`attachExecution: no run ${runId}`);
      }
      const { finishedAt: _finished, stopReason: _reason, error: _error, ...rest } = run;
      return {
        ...rest,
        executionArn,
        executions: [...((rest['executions'] as string[] | undefined) ?? []), executionArn],
        status: 'running',
        updatedAt: now.toISOString(),
        ...(options.fingerprint !== undefined && { fingerprint: options.fingerprint }),
        ...(options.definitionHash !== undefined && { definitionHash: options.definitionHash }),
        ...(options.migration && {
          migrations: [...((rest['migrations'] as unknown[] | undefined) ?? []), options.migration],
          ...(options.migration.to.version !== undefined && { agentVersion: options.migration.to.version }),
        }),
        runningRun: RUNNING,
      };
    });
    return written ? strip(item as unknown as RunRecord) : undefined;
  }

  async recordRecovery(runId: string, recovery: RecoveryRecord, expected: { executionArn: string; previousKey?: string }): Promise<boolean> {
    const { written } = await this.update(runKey(runId), (run) =>
      // The run's recovery record is its own lock: a second delivery of the same ended execution,
      // or a racing recovery, finds another key than the one it read.
      run && run['executionArn'] === expected.executionArn && (run['recovery'] as RecoveryRecord | undefined)?.key === expected.previousKey
        ? { ...run, recovery, updatedAt: recovery.at }
        : undefined,
    );
    return written;
  }

  async finishRun(
    runId: string,
    outcome: { status: 'succeeded' | 'stopped' | 'killed' | 'failed'; stopReason?: string; error?: { error: string; cause: string } },
    now: Date,
  ): Promise<RunRecord> {
    const at = now.toISOString();
    const { item } = await this.update(runKey(runId), (run) => {
      if (!run) throw conditionFailed(`finishRun: no run ${runId}`);
      const { runningRun: _running, ...rest } = run;
      return {
        ...rest,
        status: outcome.status,
        updatedAt: at,
        finishedAt: at,
        ...(outcome.stopReason !== undefined && { stopReason: outcome.stopReason }),
        ...(outcome.error !== undefined && { error: outcome.error }),
      };
    });
    return strip(item as unknown as RunRecord);
  }

  async killRun(runId: string, flag: KillFlag): Promise<boolean> {
    const { item } = await this.update(runKey(runId), (run) => (run && run['killed'] === undefined ? { ...run, killed: flag } : undefined));
    return item !== undefined;
  }

  async getGlobalKill(): Promise<KillFlag | undefined> {
    const item = await this.get<{ flag?: KillFlag }>(GLOBAL_KILL);
    return item?.flag;
  }

  async setGlobalKill(flag: KillFlag | undefined): Promise<void> {
    await this.put({ ...GLOBAL_KILL, kind: 'kill', ...(flag ? { flag } : {}) });
  }

  async recordGuardEvent(runId: string, event: GuardEvent): Promise<void> {
    await this.update(runKey(runId), (run) => {
      // The set of reasons keeps a warning repeated on every turn from filling the record.
      const reasons = (run?.['guardReasons'] as Set<string> | undefined) ?? new Set<string>();
      if (!run || reasons.has(event.reason)) return undefined;
      return { ...run, guardEvents: [...((run['guardEvents'] as GuardEvent[] | undefined) ?? []), event], guardReasons: new Set([...reasons, event.reason]) };
    });
  }

  async getBreaker(name: string): Promise<BreakerState | undefined> {
    const breaker = await this.get<BreakerState & { kind?: string }>(breakerKey(name));
    if (!breaker) return undefined;
    const { kind: _kind, ...state } = breaker;
    return state;
  }

  async saveBreaker(next: BreakerState): Promise<boolean> {
    const { written } = await this.update(breakerKey(next.name), (current) =>
      // Optimistic: the version read must still be there (version 1 may also create the breaker).
      (current ? current['version'] === next.version - 1 : next.version === 1) ? { ...breakerKey(next.name), kind: 'breaker', ...next } : undefined,
    );
    return written;
  }

  async recordTurn(turn: TurnRecord): Promise<TurnRecord> {
    const key = { pk: runKey(turn.runId).pk, sk: turnSk(turn.turn) };
    if (await this.putIfAbsent({ ...key, ...turn })) return turn;
    const first = await this.get<TurnRecord>(key);
    if (!first) throw new Error(`turn ${turn.turn} of run ${turn.runId} vanished after a conflicting write`);
    return first;
  }

  async getTurn(runId: string, turn: number): Promise<TurnRecord | undefined> {
    return this.get<TurnRecord>({ pk: runKey(runId).pk, sk: turnSk(turn) });
  }

  async listConversation(
    runId: string,
    options: { fromTurn?: number } = {},
  ): Promise<{ turns: TurnRecord[]; calls: ToolCallRecord[]; approvals: ApprovalRecord[] }> {
    const items = await this.queryAll(
      // The whole partition: turns and calls sort in conversation order (TURN#0001, TURN#0001#CALL#01,
      // …); budget approvals (BUDGET#…) and the run record are told apart by their kind. From a
      // turn on: only the keys from TURN#<n> (BUDGET# and RUN sort before every TURN#).
      options.fromTurn === undefined
        ? { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': runKey(runId).pk } }
        : { KeyConditionExpression: 'pk = :pk AND sk >= :from', ExpressionAttributeValues: { ':pk': runKey(runId).pk, ':from': turnSk(options.fromTurn) } },
    );
    return {
      turns: items.filter((item): item is TurnRecord => item.kind === 'turn'),
      calls: items.filter((item): item is ToolCallRecord => item.kind === 'tool'),
      approvals: items.filter((item): item is ApprovalRecord => item.kind === 'approval'),
    };
  }

  async countStep(runId: string, stepKey: string, deltas: Partial<Counters>): Promise<boolean> {
    const { written } = await this.update(runKey(runId), (run) => {
      // The set of counted step keys makes the count idempotent: a retried step that was counted
      // already changes nothing.
      const counted = (run?.['countedSteps'] as Set<string> | undefined) ?? new Set<string>();
      if (!run || counted.has(stepKey)) return undefined;
      const next: Item = { ...run, countedSteps: new Set([...counted, stepKey]) };
      for (const [name, delta] of Object.entries(deltas)) if (delta) next[name] = ((next[name] as number | undefined) ?? 0) + delta;
      return next;
    });
    return written;
  }

  async getCall(runId: string, turn: number, call: number): Promise<ToolCallRecord | undefined> {
    return this.get<ToolCallRecord>({ pk: runKey(runId).pk, sk: callSk(turn, call) });
  }

  async loadStep(runId: string, want: StepWant = {}): Promise<StepRead> {
    checkStepWant(want);
    const pk = runKey(runId).pk;
    const keys = [
      runKey(runId),
      GLOBAL_KILL,
      ...(want.turns ?? []).map((turn) => ({ pk, sk: turnSk(turn) })),
      ...(want.calls ?? []).map(({ turn, call }) => ({ pk, sk: callSk(turn, call) })),
      ...(want.breaker === undefined ? [] : [breakerKey(want.breaker)]),
    ];
    // One BatchGetItem (strongly consistent); it may leave keys unprocessed under load: ask again for those.
    const unique = [...new Map(keys.map((key) => [`${key.pk}|${key.sk}`, key])).values()];
    const items = new Map<string, Record<string, unknown>>();
    let pending: Record<string, unknown>[] | undefined = unique;
    for (let round = 0; pending && pending.length > 0; round++) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 20 * 2 ** round)));
      if (round >= 8) throw new Error(`loadStep: DynamoDB left ${pending.length} keys unprocessed after ${round} rounds`);
      const result: BatchGetCommandOutput = await this.doc.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } } }));
      const sealer = await this.seals();
      for (const item of result.Responses?.[this.tableName] ?? []) items.set(`${item['pk']}|${item['sk']}`, this.verified(sealer, item));
      pending = result.UnprocessedKeys?.[this.tableName]?.Keys;
    }
    // What the step asked for and is not there is known absent: a claim that follows puts at once.
    for (const key of unique) if (!items.has(`${key['pk']}|${key['sk']}`)) this.basis.set(`${key['pk']}|${key['sk']}`, ABSENT);
    const read = <T>(key: { pk: string; sk: string }) => {
      const item = items.get(`${key.pk}|${key.sk}`);
      return item && (strip(item) as T);
    };
    const found = <T>(records: (T | undefined)[]) => records.filter((record): record is T => record !== undefined);
    const run = read<RunRecord>(runKey(runId));
    const globalKill = read<{ flag?: KillFlag }>(GLOBAL_KILL)?.flag;
    const { kind: _kind, ...breaker } = (want.breaker === undefined ? undefined : read<BreakerState & { kind?: string }>(breakerKey(want.breaker))) ?? {};
    return {
      ...(run && { run }),
      ...(globalKill && { globalKill }),
      turns: found((want.turns ?? []).map((turn) => read<TurnRecord>({ pk, sk: turnSk(turn) }))),
      calls: found((want.calls ?? []).map(({ turn, call }) => read<ToolCallRecord>({ pk, sk: callSk(turn, call) }))),
      ...('name' in breaker && { breaker: breaker as BreakerState }),
    };
  }

  async recordCall(
    call: ToolCallRecord & { status: 'completed' },
    now: Date,
  ): Promise<{ recorded: true; record: ToolCallRecord } | { recorded: false; existing: ToolCallRecord }> {
    const key = { pk: runKey(call.runId).pk, sk: callSk(call.turn, call.call) };
    const { attempts: _attempts, ...fields } = call;
    const { written, item } = await this.update(key, (current) =>
      claimable(current, now) ? { ...current, ...key, ...fields, attempts: ((current?.['attempts'] as number | undefined) ?? 0) + 1, expiresAt: expiresAt(now) } : undefined,
    );
    if (!item) throw new Error(`tool call ${key.sk} of run ${call.runId} vanished after a conflicting record`);
    return written ? { recorded: true, record: strip(item as unknown as ToolCallRecord) } : { recorded: false, existing: strip(item as unknown as ToolCallRecord) };
  }

  async claimCall(
    call: ToolCallRecord,
    now: Date,
  ): Promise<{ claimed: true; record: ToolCallRecord } | { claimed: false; existing: ToolCallRecord }> {
    const key = { pk: runKey(call.runId).pk, sk: callSk(call.turn, call.call) };
    const { runId, turn, toolCallId, name, args, effect, idempotencyKey, leaseUntil } = call;
    const { written, item } = await this.update(key, (current) =>
      claimable(current, now)
        ? {
            ...current,
            ...key,
            kind: 'tool',
            runId,
            turn,
            call: call.call,
            toolCallId,
            name,
            args,
            effect,
            idempotencyKey,
            status: 'in_flight',
            leaseUntil,
            attempts: ((current?.['attempts'] as number | undefined) ?? 0) + 1,
            expiresAt: expiresAt(now),
          }
        : undefined,
    );
    if (!item) throw new Error(`tool call ${key.sk} of run ${call.runId} vanished after a conflicting claim`);
    return written ? { claimed: true, record: strip(item as unknown as ToolCallRecord) } : { claimed: false, existing: strip(item as unknown as ToolCallRecord) };
  }

  async completeCall(
    runId: string,
    turn: number,
    call: number,
    outcome: { outcome: string; result: string; latencyMs: number },
    now: Date,
  ): Promise<ToolCallRecord> {
    const key = { pk: runKey(runId).pk, sk: callSk(turn, call) };
    const { item } = await this.update(key, (current) => {
      if (current?.['status'] !== 'in_flight') throw conditionFailed(`completeCall: call ${key.sk} of run ${runId} is not in flight`);
      return { ...current, status: 'completed', outcome: outcome.outcome, result: outcome.result, latencyMs: outcome.latencyMs, recordedAt: now.toISOString() };
    });
    return strip(item as unknown as ToolCallRecord);
  }

  async releaseCall(runId: string, turn: number, call: number, now: Date): Promise<void> {
    await this.update({ pk: runKey(runId).pk, sk: callSk(turn, call) }, (current) =>
      current?.['status'] === 'in_flight' ? { ...current, leaseUntil: now.toISOString() } : undefined,
    );
  }

  async upsertApproval(approval: ApprovalRecord, taskToken: string): Promise<ApprovalRecord> {
    const key = { pk: runKey(approval.runId).pk, sk: approvalSkOf(approval) };
    // The token first: an approval someone can see and decide always has a token to wake. A retried
    // or resumed RequestApproval carries a new one: a pending approval must wake the execution that
    // waits now, not a dead one. A decided one keeps its decision (and the token it was decided on).
    const current = await this.getItem(key);
    // What was read is the basis of the update below (a conditional put: one read, not two).
    if (!current) this.basis.set(`${key.pk}|${key.sk}`, ABSENT);
    if (!current || current['status'] === 'pending') await this.putTaskToken(approval, taskToken);
    const { item } = await this.update(key, (existing) =>
      existing ? undefined : { ...key, ...approval, pendingApproval: PENDING, expiresAt: expiresAt(new Date()) },
    );
    return strip(item as unknown as ApprovalRecord);
  }

  async getTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<string | undefined> {
    const result = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: tokenKey(key), ConsistentRead: true }));
    const token = result.Item?.['taskToken'];
    return typeof token === 'string' ? token : undefined;
  }

  /**
   * A plain put, outside the seal: the token is a capability Step Functions issues and checks
   * itself (a forged one wakes nothing), and its own partition lets IAM keep it from every role
   * but the approval functions' (dynamodb:LeadingKeys, infra/ledger-table.ts).
   */
  private async putTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>, taskToken: string): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...tokenKey(key), taskToken, expiresAt: expiresAt(new Date()) } }));
  }

  async getApproval(runId: string, turn: number, call: number): Promise<ApprovalRecord | undefined> {
    return this.get<ApprovalRecord>({ pk: runKey(runId).pk, sk: approvalSkOf({ turn, call }) });
  }

  async getBudgetApproval(runId: string, guard: ExtendableGuard, extension: number): Promise<ApprovalRecord | undefined> {
    return this.get<ApprovalRecord>({ pk: runKey(runId).pk, sk: budgetApprovalSk(guard, extension) });
  }

  async applyBudgetExtension(runId: string, guard: ExtendableGuard, extension: number, limit: number): Promise<RunRecord> {
    const { item } = await this.update(runKey(runId), (run) => {
      if (!run) throw new Error(`no run ${runId}`);
      // Only a later extension of this budget applies: a repeated or stale one changes nothing.
      const applied = (run['budgetExtensions'] as RunRecord['budgetExtensions'])?.[guard];
      if (applied !== undefined && applied >= extension) return undefined;
      return {
        ...run,
        config: { ...(run['config'] as object), [BUDGET_FIELDS[guard]]: limit },
        budgetExtensions: { ...(run['budgetExtensions'] as object), [guard]: extension },
      };
    });
    return strip(item as unknown as RunRecord);
  }

  async findApproval(approvalId: string): Promise<ApprovalRecord | undefined> {
    const result = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: LedgerIndexes.byApprovalId,
        KeyConditionExpression: 'approvalId = :id',
        ExpressionAttributeValues: { ':id': approvalId },
      }),
    );
    const item = result.Items?.[0] as ApprovalRecord | undefined;
    // The index is eventually consistent: read the item itself for its current status.
    return item ? this.get<ApprovalRecord>({ pk: runKey(item.runId).pk, sk: approvalSkOf(item) }) : undefined;
  }

  async listPendingApprovals(): Promise<ApprovalRecord[]> {
    const items = await this.queryAll({
      IndexName: LedgerIndexes.pendingApprovals,
      KeyConditionExpression: 'pendingApproval = :pending',
      ExpressionAttributeValues: { ':pending': PENDING },
    });
    return items.filter((item): item is ApprovalRecord => item.kind === 'approval');
  }

  async decideApproval(
    key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>,
    decision: ApprovalDecision,
    now: Date,
  ): Promise<{ decided: boolean; record: ApprovalRecord }> {
    const itemKey = { pk: runKey(key.runId).pk, sk: approvalSkOf(key) };
    const { linkId, reason, status, decidedBy, decidedVia, decisionMac, waitedMs } = decision;
    const { written, item } = await this.update(itemKey, (current) => {
      if (!current) throw new Error(`no approval for call ${key.turn}/${key.call} of run ${key.runId}`);
      if (current['status'] !== 'pending') return undefined;
      const { pendingApproval: _pending, ...rest } = current;
      const usedLinks = linkId ? [...((rest['usedLinks'] as string[] | undefined) ?? []), linkId] : rest['usedLinks'];
      return {
        ...rest,
        status,
        reason: reason ?? '',
        decidedBy,
        decidedAt: now.toISOString(),
        ...(decidedVia && { decidedVia }),
        ...(decisionMac && { decisionMac }),
        ...(waitedMs !== undefined && { waitedMs }),
        ...(usedLinks !== undefined && { usedLinks }),
      };
    });
    return { decided: written, record: strip(item as unknown as ApprovalRecord) };
  }

  async recordFirstApproval(
    key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>,
    first: NonNullable<ApprovalRecord['firstApproval']>,
    linkId?: string,
  ): Promise<{ recorded: boolean; record: ApprovalRecord }> {
    const itemKey = { pk: runKey(key.runId).pk, sk: approvalSkOf(key) };
    const { written, item } = await this.update(itemKey, (current) => {
      if (!current) throw new Error(`no approval for call ${key.turn}/${key.call} of run ${key.runId}`);
      if (current['status'] !== 'pending' || current['firstApproval'] !== undefined) return undefined;
      const usedLinks = linkId ? [...((current['usedLinks'] as string[] | undefined) ?? []), linkId] : current['usedLinks'];
      return { ...current, firstApproval: first, ...(usedLinks !== undefined && { usedLinks }) };
    });
    return { recorded: written, record: strip(item as unknown as ApprovalRecord) };
  }

  /**
   * Updates one item: `change` gets the current item (verified; undefined when there is none) and
   * returns the whole new item, or undefined to write nothing (a condition that does not hold). The
   * new item is sealed and put only if the item is still the one `change` saw (same seal, or still
   * absent); otherwise it is read again and `change` runs again on what is there now.
   */
  private async update(key: { pk: string; sk: string }, change: (current: Item | undefined) => Item | undefined): Promise<{ written: boolean; item?: Item }> {
    // Updates of one item from this process take turns (each starts from the last one's item):
    // concurrent writers here cost one round trip each, not a storm of failed conditions.
    const id = `${key.pk}|${key.sk}`;
    const before = this.updating.get(id) ?? Promise.resolve();
    const mine = before.then(() => this.updateNow(key, change));
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    this.updating.set(id, settled);
    void settled.then(() => {
      if (this.updating.get(id) === settled) this.updating.delete(id);
    });
    return mine;
  }

  private async updateNow(key: { pk: string; sk: string }, change: (current: Item | undefined) => Item | undefined): Promise<{ written: boolean; item?: Item }> {
    const id = `${key.pk}|${key.sk}`;
    for (let attempt = 0; ; attempt++) {
      const known = attempt === 0 ? this.basis.get(id) : undefined;
      const current = known === ABSENT ? undefined : known ? structuredClone(known) : await this.getItem(key);
      const next = change(current && structuredClone(current));
      if (!next) return { written: false, item: current };
      const item = { ...next, ...key };
      try {
        await this.put(item, current ? { ConditionExpression: '#seal = :seal', ExpressionAttributeNames: { '#seal': 'seal' }, ExpressionAttributeValues: { ':seal': current['seal'] } } : { ConditionExpression: 'attribute_not_exists(pk)' });
        return { written: true, item: structuredClone(this.basis.get(id) as Item) };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || attempt >= 20) throw error;
        this.basis.delete(id);
      }
    }
  }

  /** Puts a whole item, sealed (and remembered as the basis of the next update). */
  private async put(item: Item, condition: Pick<PutCommand['input'], 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> = {}): Promise<void> {
    const { seal: _old, ...attributes } = item;
    const key = { pk: String(item['pk']), sk: String(item['sk']) };
    const sealed = { ...attributes, seal: (await this.seals()).seal(key, attributes) };
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: sealed, ...condition }));
    this.remember(sealed);
  }

  private async putIfAbsent(item: Record<string, unknown>): Promise<boolean> {
    try {
      await this.put({ ...item, expiresAt: expiresAt(new Date()) }, { ConditionExpression: 'attribute_not_exists(pk)' });
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  private async getItem(key: { pk: string; sk: string }): Promise<Item | undefined> {
    const result = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return result.Item ? this.verified(await this.seals(), result.Item) : undefined;
  }

  private async get<T>(key: { pk: string; sk: string }): Promise<T | undefined> {
    const item = await this.getItem(key);
    return item ? (strip(item) as T) : undefined;
  }

  /** A listed run's item once verified; a damaged one goes to `onDamaged` (undefined) when it is given. */
  private trusted(sealer: LedgerSealer, item: Item, options: DamagedRunOptions): Item | undefined {
    try {
      return this.verified(sealer, item);
    } catch (error) {
      return damaged(String(item['runId']), error, options);
    }
  }

  /** The item, once its seal is verified (a LedgerIntegrityError naming the record otherwise). */
  private verified(sealer: LedgerSealer, item: Item): Item {
    sealer.verify({ pk: String(item['pk']), sk: String(item['sk']) }, item, item['seal']);
    this.remember(item);
    return item;
  }

  private async seals(): Promise<LedgerSealer> {
    if (typeof this.sealer !== 'function') return this.sealer;
    // A key that failed to load is asked for again by the next call, not remembered as failed.
    this.loadedSealer ??= this.sealer().catch((error: unknown) => {
      this.loadedSealer = undefined;
      throw error;
    });
    return this.loadedSealer;
  }

  /** Keeps a copy (a caller may change the records it is handed) as the basis of the next update. */
  private remember(item: Item): void {
    // A bound, not a cache policy: a step touches a handful of items; a long-lived process starts over.
    if (this.basis.size >= 1_000) this.basis.clear();
    this.basis.set(`${item['pk']}|${item['sk']}`, structuredClone(item));
  }

  private async queryAll(
    input: Pick<QueryCommand['input'], 'IndexName' | 'KeyConditionExpression' | 'ExpressionAttributeValues'>,
  ): Promise<LedgerRecord[]> {
    const items: LedgerRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({ TableName: this.tableName, ConsistentRead: input.IndexName ? undefined : true, ...input, ExclusiveStartKey: start }),
      );
      // An index holds a projection of the items (never the task token): verified where it is read whole.
      const read = (page.Items ?? []) as Item[];
      const sealer = await this.seals();
      items.push(...(input.IndexName ? read : read.map((item) => this.verified(sealer, item))).map((item) => strip(item) as unknown as LedgerRecord));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  // ── large values by reference (ledger/blobs.ts) ─────────────────────────────────────────

  async putBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void> {
    // Their own partition: the conversation's queries never read them. Plain puts: the same
    // digest is the same chunks, so a retry's overwrite changes nothing.
    const expires = expiresAt(new Date());
    await Promise.all(
      chunks.map((data, index) =>
        this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...blobKey(runId, digest, index), kind: 'blob', data, expiresAt: expires } })),
      ),
    );
  }

  async getBlob(runId: string, digest: string): Promise<string[]> {
    const chunks: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          ConsistentRead: true,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :digest)',
          ExpressionAttributeValues: { ':pk': blobKey(runId, digest, 0).pk, ':digest': `${digest}#` },
          ProjectionExpression: '#data',
          ExpressionAttributeNames: { '#data': 'data' },
          ExclusiveStartKey: start,
        }),
      );
      chunks.push(...(page.Items ?? []).map((item) => String(item['data'])));
      start = page.LastEvaluatedKey;
    } while (start);
    return chunks;
  }

  // ── the runs marked running, without a scan ─────────────────────────────────────────────

  async listRunningRuns(options: DamagedRunOptions = {}): Promise<RunRecord[]> {
    // The index projects only the run id (a run record changes at every step; a full copy in the
    // index would be rewritten with it): each run is then read itself, consistently, and checked
    // again (the index is eventually consistent).
    const keys = await this.queryAll({ IndexName: LedgerIndexes.runningRuns, KeyConditionExpression: 'runningRun = :running', ExpressionAttributeValues: { ':running': RUNNING } });
    const runs = await Promise.all(
      keys.map(async (key) => {
        const { runId } = key as { runId: string };
        try {
          return await this.getRun(runId);
        } catch (error) {
          return damaged(runId, error, options);
        }
      }),
    );
    return runs.filter((run): run is RunRecord => run?.status === 'running').sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }
}

/**
 * Each run's record is verified alone in a listing: a damaged one is named to `onDamaged` and left
 * out, so that it does not hide the others; without `onDamaged` (and for any other error) it throws.
 */
function damaged(runId: string, error: unknown, options: DamagedRunOptions): undefined {
  if (!(error instanceof LedgerIntegrityError) || !options.onDamaged) throw error;
  options.onDamaged(runId, error);
  return undefined;
}

/** A chunk of a large value: `BLOB#<runId>` / `<digest>#<index>` (sorts in chunk order). */
function blobKey(runId: string, digest: string, index: number) {
  return { pk: `BLOB#${runId}`, sk: `${digest}#${String(index).padStart(5, '0')}` };
}

type Item = Record<string, unknown>;
/** An item a read found absent (the basis of a put conditional on its absence). */
const ABSENT = Symbol('absent');

/** The condition of claimCall and recordCall: no record, or an in-flight one whose holder's lease expired. */
function claimable(current: Item | undefined, now: Date): boolean {
  return !current || (current['status'] === 'in_flight' && String(current['leaseUntil']) < now.toISOString());
}

/** The error a failed condition raises (what an UpdateItem with that condition would have thrown). */
function conditionFailed(message: string): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({ message: `The conditional request failed: ${message}`, $metadata: {} });
}

function expiresAt(now: Date): number {
  return Math.floor(now.getTime() / 1000) + RETENTION_SECONDS;
}

/** Drops the storage-only attributes so records compare equal to what was written. */
function strip<T>(item: T): T {
  const { pk: _pk, sk: _sk, expiresAt: _expires, pendingApproval: _pending, runningRun: _running, countedSteps: _counted, guardReasons: _reasons, seal: _seal, taskToken: _legacyToken, ...rest } = item as Record<
    string,
    unknown
  >;
  return rest as T;
}
