import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { BreakerState } from '../guards/breaker.js';
import { checkStepWant, type ApprovalDecision, type AttachOptions, type Ledger, type StepRead, type StepWant } from './ledger.js';
import {
  approvalSkOf,
  BUDGET_FIELDS,
  budgetApprovalSk,
  callSk,
  runKey,
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

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
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

  async listRuns(limit = 100): Promise<RunRecord[]> {
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
      items.push(...((page.Items ?? []) as RunRecord[]));
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
    const sets = ['executionArn = :arn', 'executions = list_append(executions, :arns)', '#status = :running', 'updatedAt = :now', 'runningRun = :runningRun'];
    const values: Record<string, unknown> = { ':arn': executionArn, ':arns': [executionArn], ':running': 'running', ':now': now.toISOString(), ':runningRun': RUNNING };
    if (options.fingerprint !== undefined) {
      sets.push('fingerprint = :fingerprint');
      values[':fingerprint'] = options.fingerprint;
    }
    if (options.definitionHash !== undefined) {
      sets.push('definitionHash = :definition');
      values[':definition'] = options.definitionHash;
    }
    if (options.migration) {
      sets.push('migrations = list_append(if_not_exists(migrations, :noMigrations), :migration)');
      values[':noMigrations'] = [];
      values[':migration'] = [options.migration];
      if (options.migration.to.version !== undefined) {
        sets.push('agentVersion = :agentVersion');
        values[':agentVersion'] = options.migration.to.version;
      }
    }
    // Two executions resuming the same run at once: only the first to replace the dead one drives it.
    if (options.previousArn !== undefined) values[':previous'] = options.previousArn;
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: runKey(runId),
          UpdateExpression: `SET ${sets.join(', ')} REMOVE finishedAt, stopReason, #error`,
          ConditionExpression: `attribute_exists(pk)${options.previousArn !== undefined ? ' AND executionArn = :previous' : ''}`,
          ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return strip(result.Attributes as RunRecord);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException && options.previousArn !== undefined) return undefined;
      throw error;
    }
  }

  async recordRecovery(runId: string, recovery: RecoveryRecord, expected: { executionArn: string; previousKey?: string }): Promise<boolean> {
    return this.conditionally(
      new UpdateCommand({
        TableName: this.tableName,
        Key: runKey(runId),
        UpdateExpression: 'SET recovery = :recovery, updatedAt = :now',
        // The run's recovery record is its own lock: a second delivery of the same ended
        // execution, or a racing recovery, finds another key than the one it read.
        ConditionExpression:
          expected.previousKey === undefined
            ? 'executionArn = :arn AND attribute_not_exists(recovery)'
            : 'executionArn = :arn AND recovery.#key = :previousKey',
        ExpressionAttributeNames: expected.previousKey === undefined ? undefined : { '#key': 'key' },
        ExpressionAttributeValues: {
          ':recovery': recovery,
          ':now': recovery.at,
          ':arn': expected.executionArn,
          ...(expected.previousKey === undefined ? {} : { ':previousKey': expected.previousKey }),
        },
      }),
    );
  }

  async finishRun(
    runId: string,
    outcome: { status: 'succeeded' | 'stopped' | 'killed' | 'failed'; stopReason?: string; error?: { error: string; cause: string } },
    now: Date,
  ): Promise<RunRecord> {
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = { ':status': outcome.status, ':now': now.toISOString() };
    const sets = ['#status = :status', 'updatedAt = :now', 'finishedAt = :now'];
    if (outcome.stopReason !== undefined) {
      sets.push('stopReason = :reason');
      values[':reason'] = outcome.stopReason;
    }
    if (outcome.error !== undefined) {
      sets.push('#error = :error');
      names['#error'] = 'error';
      values[':error'] = outcome.error;
    }
    const result = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: runKey(runId),
        UpdateExpression: `SET ${sets.join(', ')} REMOVE runningRun`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip(result.Attributes as RunRecord);
  }

  async killRun(runId: string, flag: KillFlag): Promise<boolean> {
    return this.conditionally(
      new UpdateCommand({
        TableName: this.tableName,
        Key: runKey(runId),
        UpdateExpression: 'SET killed = if_not_exists(killed, :flag)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':flag': flag },
      }),
    );
  }

  async getGlobalKill(): Promise<KillFlag | undefined> {
    const item = await this.get<{ flag?: KillFlag }>(GLOBAL_KILL);
    return item?.flag;
  }

  async setGlobalKill(flag: KillFlag | undefined): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.tableName, Item: { ...GLOBAL_KILL, kind: 'kill', ...(flag ? { flag } : {}) } }));
  }

  async recordGuardEvent(runId: string, event: GuardEvent): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: runKey(runId),
          // The set of reasons keeps a warning repeated on every turn from filling the record.
          UpdateExpression: 'SET guardEvents = list_append(if_not_exists(guardEvents, :empty), :event) ADD guardReasons :reasonSet',
          ConditionExpression: 'attribute_exists(pk) AND NOT contains(guardReasons, :reason)',
          ExpressionAttributeValues: { ':empty': [], ':event': [event], ':reasonSet': new Set([event.reason]), ':reason': event.reason },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async getBreaker(name: string): Promise<BreakerState | undefined> {
    const breaker = await this.get<BreakerState & { kind?: string }>(breakerKey(name));
    if (!breaker) return undefined;
    const { kind: _kind, ...state } = breaker;
    return state;
  }

  async saveBreaker(next: BreakerState): Promise<boolean> {
    return this.conditionally(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...breakerKey(next.name), kind: 'breaker', ...next },
        ConditionExpression: next.version === 1 ? 'attribute_not_exists(pk) OR version = :previous' : 'version = :previous',
        ExpressionAttributeValues: { ':previous': next.version - 1 },
      }),
    );
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
    const entries = Object.entries(deltas).filter(([, value]) => value !== undefined && value !== 0);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':key': new Set([stepKey]), ':keyString': stepKey };
    const adds = entries.map(([name, value], index) => {
      names[`#c${index}`] = name;
      values[`:c${index}`] = value;
      return `#c${index} :c${index}`;
    });
    return this.conditionally(
      new UpdateCommand({
        TableName: this.tableName,
        Key: runKey(runId),
        // The set of counted step keys makes the ADD idempotent: a retried step that was
        // counted already fails the condition instead of counting twice.
        UpdateExpression: `ADD ${[...adds, 'countedSteps :key'].join(', ')}`,
        ConditionExpression: 'attribute_exists(pk) AND NOT contains(countedSteps, :keyString)',
        ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
        ExpressionAttributeValues: values,
      }),
    );
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
      for (const item of result.Responses?.[this.tableName] ?? []) items.set(`${item['pk']}|${item['sk']}`, item);
      pending = result.UnprocessedKeys?.[this.tableName]?.Keys;
    }
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
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':inFlight': 'in_flight', ':now': now.toISOString(), ':one': 1, ':expiresAt': expiresAt(now) };
    const sets = Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([name, value], index) => {
        names[`#f${index}`] = name;
        values[`:f${index}`] = value;
        return `#f${index} = :f${index}`;
      });
    names['#status'] = 'status';
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: `SET ${[...sets, 'expiresAt = :expiresAt'].join(', ')} ADD attempts :one`,
          // The condition of claimCall: no record, or an in-flight one whose holder's lease expired.
          ConditionExpression: 'attribute_not_exists(pk) OR (#status = :inFlight AND leaseUntil < :now)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { recorded: true, record: strip(result.Attributes as ToolCallRecord) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = await this.get<ToolCallRecord>(key);
      if (!existing) throw new Error(`tool call ${key.sk} of run ${call.runId} vanished after a conflicting record`);
      return { recorded: false, existing };
    }
  }

  async claimCall(
    call: ToolCallRecord,
    now: Date,
  ): Promise<{ claimed: true; record: ToolCallRecord } | { claimed: false; existing: ToolCallRecord }> {
    const key = { pk: runKey(call.runId).pk, sk: callSk(call.turn, call.call) };
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression:
            'SET #kind = :kind, runId = :runId, turn = :turn, #call = :call, toolCallId = :toolCallId, #name = :name, args = :args, effect = :effect, idempotencyKey = :key, #status = :inFlight, leaseUntil = :lease, expiresAt = :expiresAt ADD attempts :one',
          ConditionExpression: 'attribute_not_exists(pk) OR (#status = :inFlight AND leaseUntil < :now)',
          ExpressionAttributeNames: { '#kind': 'kind', '#call': 'call', '#name': 'name', '#status': 'status' },
          ExpressionAttributeValues: {
            ':kind': 'tool',
            ':runId': call.runId,
            ':turn': call.turn,
            ':call': call.call,
            ':toolCallId': call.toolCallId,
            ':name': call.name,
            ':args': call.args,
            ':effect': call.effect,
            ':key': call.idempotencyKey,
            ':inFlight': 'in_flight',
            ':lease': call.leaseUntil,
            ':now': now.toISOString(),
            ':one': 1,
            ':expiresAt': expiresAt(now),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { claimed: true, record: strip(result.Attributes as ToolCallRecord) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = await this.get<ToolCallRecord>(key);
      if (!existing) throw new Error(`tool call ${key.sk} of run ${call.runId} vanished after a conflicting claim`);
      return { claimed: false, existing };
    }
  }

  async completeCall(
    runId: string,
    turn: number,
    call: number,
    outcome: { outcome: string; result: string; latencyMs: number },
    now: Date,
  ): Promise<ToolCallRecord> {
    const result = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: runKey(runId).pk, sk: callSk(turn, call) },
        UpdateExpression: 'SET #status = :completed, outcome = :outcome, #result = :result, latencyMs = :latency, recordedAt = :now',
        ConditionExpression: '#status = :inFlight',
        ExpressionAttributeNames: { '#status': 'status', '#result': 'result' },
        ExpressionAttributeValues: {
          ':completed': 'completed',
          ':inFlight': 'in_flight',
          ':outcome': outcome.outcome,
          ':result': outcome.result,
          ':latency': outcome.latencyMs,
          ':now': now.toISOString(),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return strip(result.Attributes as ToolCallRecord);
  }

  async releaseCall(runId: string, turn: number, call: number, now: Date): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: runKey(runId).pk, sk: callSk(turn, call) },
          UpdateExpression: 'SET leaseUntil = :now',
          ConditionExpression: '#status = :inFlight',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':now': now.toISOString(), ':inFlight': 'in_flight' },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async upsertApproval(approval: ApprovalRecord): Promise<ApprovalRecord> {
    const key = { pk: runKey(approval.runId).pk, sk: approvalSkOf(approval) };
    if (await this.putIfAbsent({ ...key, ...approval, pendingApproval: PENDING })) return approval;
    // A retried or resumed RequestApproval carries a new task token: the pending approval must
    // wake the execution that is waiting now, not a dead one.
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET taskToken = :token',
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':token': approval.taskToken, ':pending': 'pending' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return strip(result.Attributes as ApprovalRecord);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const decided = await this.get<ApprovalRecord>(key);
      if (!decided) throw new Error(`approval ${approval.approvalId} vanished after a conflicting write`);
      return decided;
    }
  }

  async getApproval(runId: string, turn: number, call: number): Promise<ApprovalRecord | undefined> {
    return this.get<ApprovalRecord>({ pk: runKey(runId).pk, sk: approvalSkOf({ turn, call }) });
  }

  async getBudgetApproval(runId: string, guard: ExtendableGuard, extension: number): Promise<ApprovalRecord | undefined> {
    return this.get<ApprovalRecord>({ pk: runKey(runId).pk, sk: budgetApprovalSk(guard, extension) });
  }

  async applyBudgetExtension(runId: string, guard: ExtendableGuard, extension: number, limit: number): Promise<RunRecord> {
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: runKey(runId),
          // Only the next extension of this budget applies: a repeated or stale one changes nothing.
          UpdateExpression: 'SET #config.#field = :limit, budgetExtensions.#guard = :extension',
          ConditionExpression: 'attribute_not_exists(budgetExtensions.#guard) OR budgetExtensions.#guard < :extension',
          ExpressionAttributeNames: { '#config': 'config', '#field': BUDGET_FIELDS[guard], '#guard': guard },
          ExpressionAttributeValues: { ':limit': limit, ':extension': extension },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return strip(result.Attributes as RunRecord);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const run = await this.getRun(runId);
      if (!run) throw new Error(`no run ${runId}`);
      return run;
    }
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
    const { linkId, decidedVia, decisionMac, waitedMs } = decision;
    const extra = Object.entries({ decidedVia, decisionMac, waitedMs }).filter(([, value]) => value !== undefined);
    const sets = [
      '#status = :status, reason = :reason, decidedBy = :by, decidedAt = :now',
      ...extra.map(([name]) => `${name} = :${name}`),
      ...(linkId ? ['usedLinks = list_append(if_not_exists(usedLinks, :noLinks), :link)'] : []),
    ];
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey,
          UpdateExpression: `SET ${sets.join(', ')} REMOVE pendingApproval`,
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':status': decision.status,
            ':reason': decision.reason ?? '',
            ':by': decision.decidedBy,
            ':now': now.toISOString(),
            ':pending': 'pending',
            ...Object.fromEntries(extra.map(([name, value]) => [`:${name}`, value])),
            ...(linkId && { ':noLinks': [], ':link': [linkId] }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { decided: true, record: strip(result.Attributes as ApprovalRecord) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const record = await this.get<ApprovalRecord>(itemKey);
      if (!record) throw new Error(`no approval for call ${key.turn}/${key.call} of run ${key.runId}`);
      return { decided: false, record };
    }
  }

  async recordFirstApproval(
    key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>,
    first: NonNullable<ApprovalRecord['firstApproval']>,
    linkId?: string,
  ): Promise<{ recorded: boolean; record: ApprovalRecord }> {
    const itemKey = { pk: runKey(key.runId).pk, sk: approvalSkOf(key) };
    try {
      const result = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey,
          UpdateExpression: `SET firstApproval = :first${linkId ? ', usedLinks = list_append(if_not_exists(usedLinks, :noLinks), :link)' : ''}`,
          ConditionExpression: '#status = :pending AND attribute_not_exists(firstApproval)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':first': first, ':pending': 'pending', ...(linkId && { ':noLinks': [], ':link': [linkId] }) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { recorded: true, record: strip(result.Attributes as ApprovalRecord) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const record = await this.get<ApprovalRecord>(itemKey);
      if (!record) throw new Error(`no approval for call ${key.turn}/${key.call} of run ${key.runId}`);
      return { recorded: false, record };
    }
  }

  /** Sends a conditional write: `false` when its condition failed (someone else wrote first). */
  private async conditionally(command: PutCommand | UpdateCommand): Promise<boolean> {
    try {
      await this.doc.send(command as UpdateCommand);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  private async putIfAbsent(item: Record<string, unknown>): Promise<boolean> {
    return this.conditionally(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...item, expiresAt: expiresAt(new Date()) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  private async get<T>(key: { pk: string; sk: string }): Promise<T | undefined> {
    const result = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
    return result.Item ? (strip(result.Item) as T) : undefined;
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
      items.push(...((page.Items ?? []) as LedgerRecord[]).map(strip));
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

  async listRunningRuns(): Promise<RunRecord[]> {
    // The index projects only the run id (a run record changes at every step; a full copy in the
    // index would be rewritten with it): each run is then read itself, consistently, and checked
    // again (the index is eventually consistent).
    const keys = await this.queryAll({ IndexName: LedgerIndexes.runningRuns, KeyConditionExpression: 'runningRun = :running', ExpressionAttributeValues: { ':running': RUNNING } });
    const runs = await Promise.all(keys.map((key) => this.getRun((key as { runId: string }).runId)));
    return runs.filter((run): run is RunRecord => run?.status === 'running').sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }
}

/** A chunk of a large value: `BLOB#<runId>` / `<digest>#<index>` (sorts in chunk order). */
function blobKey(runId: string, digest: string, index: number) {
  return { pk: `BLOB#${runId}`, sk: `${digest}#${String(index).padStart(5, '0')}` };
}

function expiresAt(now: Date): number {
  return Math.floor(now.getTime() / 1000) + RETENTION_SECONDS;
}

/** Drops the storage-only attributes so records compare equal to what was written. */
function strip<T>(item: T): T {
  const { pk: _pk, sk: _sk, expiresAt: _expires, pendingApproval: _pending, runningRun: _running, countedSteps: _counted, guardReasons: _reasons, ...rest } = item as Record<
    string,
    unknown
  >;
  return rest as T;
}
