import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  BatchWriteItemCommand,
  type BatchWriteItemCommandOutput,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  TransactionCanceledException,
  TransactionConflictException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { DamagedRunOptions } from './ledger.js';

export { itemAttributes, LedgerIndexes } from './dynamodb-item.js';
import { itemAttributes, LedgerIndexes, PENDING, RUNNING } from './dynamodb-item.js';
import { effectKey, expiresAt, type Key, type Stored } from './protocol.js';
import { runPartitions, writeKeyOf, type ItemDelete, type RunItem } from './pruning.js';
import { approvalSkOf, runKey, tokenKey, type ApprovalRecord, type RunRecord } from '../records/ledger-records.js';
import type { LedgerSealer } from './seal.js';
import { handedKey, type EngineVersions } from './handed-versions.js';
import { newestRuns, StorageLedger, type ItemWrite } from './storage-ledger.js';
import { newestRunsOf } from './dynamodb-runs-by-agent.js';
import { LedgerIntegrityError } from '../shared/errors.js';
import { landedEarlier } from './lost-answers.js';
import { cloneItem } from './clone-item.js';
import { DYNAMODB_BATCH_WRITE_MAX_ITEMS } from '../shared/limits.js';

/** The partition prefix of the business-key effects (protocol.ts `effectKey`). */
const EFFECT_PK = effectKey('').pk;

/**
 * How the ledger's DynamoDBClient is made, beside its region, credentials and endpoint:
 * `cacheMiddleware` (the SDK's own client option, SmithyConfiguration: "the client will only resolve
 * the middleware stack once per Command class"), which spares each request the resolution of the
 * client's middleware stack with the command's, the same every time. It is safe where nothing
 * changes the client's middleware after its first request: X-Ray's wrapper (`traced`) adds its
 * middleware when it wraps the client, before any. The price is lib-dynamodb's document client,
 * which refuses such a client: the ledger converts its items itself (`attributes`, `fromAttributes`).
 */
export const LEDGER_CLIENT_CONFIG = { cacheMiddleware: true } as const;

/** The conditions of a put (protocol.ts): the item is still the one read, absent or with the seal read. */
const IF_ABSENT = { ConditionExpression: 'attribute_not_exists(pk)' };
const ifSeal = (seal: unknown) => ({ ConditionExpression: '#seal = :seal', ExpressionAttributeNames: { '#seal': 'seal' }, ExpressionAttributeValues: attributes({ ':seal': seal }) });
const ifUnchanged = (expected: Stored | undefined) => (expected ? ifSeal(expected.basis) : IF_ABSENT);

/**
 * The ledger on DynamoDB, a storage engine beneath the protocol (storage-ledger.ts). It uses
 * single-item conditional writes, but for the items a rule writes together — a tool call and its
 * business-key effect, a step's record and the run item that counts it — written in one
 * transaction (`putItems`; the local emulator serves it: local/aws/dynamodb-transactions.ts). An update
 * is a read-modify-write of the whole sealed item, conditional on the seal it read:
 *
 *   loadStep (BatchGetItem) ─► remembered as the basis ─► transition ─► PutItem IF #seal = :seal read
 *                                                                         └─ ConditionalCheckFailed: GetItem, run again
 *
 * With the basis from the step's own `loadStep`, an update is one round trip, as the UpdateItem it
 * replaces was; a record written once (a turn, a run) is put `IF attribute_not_exists(pk)` at once.
 */
export class DynamoDbLedger extends StorageLedger {
  /**
   * The items this instance last read or wrote, verified, by `pk|sk`: the basis of its next
   * update. A stale basis (another writer came first) fails the condition: read again.
   */
  private readonly basis = new Map<string, Item | typeof ABSENT>();
  private loadedSealer?: Promise<LedgerSealer>;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    /**
     * Seals every item written and verifies every item read (lambdas/ledger/seal.ts); on AWS a
     * function that loads the key from Secrets Manager on first use.
     */
    private readonly sealer: LedgerSealer | (() => Promise<LedgerSealer>),
    /**
     * How the ledger waits before it tries again: a read or a prune before it sends DynamoDB's
     * unprocessed keys (`read`) or deletes (`deleteAll`) again, a write that met a transaction in
     * flight before it reads again (`put`, `putItems`). @default setTimeout
     */
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    /**
     * The agents whose runs the table holds, when the caller knows them (a deployed stack's, from its
     * outputs): `listRuns` then reads each one's newest runs by the `runsByAgent` index and only the
     * newest `limit` run items, not the whole table by a scan (what a console polling a table of
     * months of runs every 2 s would read). The runs of an agent left out are not listed.
     * @default unknown: a scan of the whole table
     */
    private readonly agents?: readonly string[],
  ) {
    super();
  }

  // ── the primitives ──────────────────────────────────────────────────────────────────────

  protected async read(keys: readonly Key[]): Promise<(Stored | undefined)[]> {
    const items = new Map<string, Item>();
    const unique = [...new Map(keys.map((key) => [id(key), key])).values()];
    if (unique.length === 1) {
      const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: keyAttributes(unique[0]!), ConsistentRead: true }));
      if (result.Item) items.set(id(unique[0]!), this.verified(await this.seals(), fromAttributes(result.Item)));
    } else {
      // One BatchGetItem (strongly consistent). DynamoDB answers at most 16 MB, 1 MB of one partition (a
      // step's keys are one run's), less under load; the keys left (UnprocessedKeys) are asked for again
      // after a backoff (API_BatchGetItem.html): it gives up only after 8 rounds in a row that read none.
      for (let pending = unique.map(keyAttributes), round = 0, idle = 0; pending.length > 0; round++) {
        if (idle >= 8) throw new Error(`loadStep: DynamoDB left ${pending.length} keys unprocessed, ${idle} rounds in a row`);
        if (round > 0) await this.sleep(Math.min(1_000, 20 * 2 ** Math.min(round, 6)));
        const result: BatchGetItemCommandOutput = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } } }));
        const sealer = await this.seals();
        for (const item of (result.Responses?.[this.tableName] ?? []).map(fromAttributes)) items.set(`${item['pk']}|${item['sk']}`, this.verified(sealer, item));
        const left = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        [idle, pending] = [left.length < pending.length ? 0 : idle + 1, left];
      }
    }
    // What was asked for and is not there is known absent: a claim that follows puts at once.
    for (const key of unique) if (!items.has(id(key))) this.basis.set(id(key), ABSENT);
    return keys.map((key) => decode(items.get(id(key))));
  }

  protected async readForUpdate(key: Key, fresh: boolean, likelyAbsent: boolean): Promise<Stored | undefined> {
    const known = fresh ? undefined : this.basis.get(id(key));
    if (known === ABSENT || (known === undefined && likelyAbsent && !fresh)) return undefined;
    return known ? decode(cloneItem(known)) : (await this.read([key]))[0];
  }

  protected async put(key: Key, stored: Stored, expected: Stored | undefined | 'any'): Promise<boolean> {
    const item = await this.sealed(key, stored);
    try {
      await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: attributes(item), ...(expected === 'any' ? {} : ifUnchanged(expected)) }));
    } catch (error) {
      // Refused on its own write, which landed but whose answer was lost (lost-answers.ts): written.
      if (error instanceof ConditionalCheckFailedException && (await landedEarlier(error, item['seal'], () => this.sealAt(key)))) {
        this.remember(item);
        return true;
      }
      // A put that meets a transaction in progress on its item (a sibling call's record and the
      // run's count) is refused as TransactionConflictException, unwritten: as a failed condition,
      // read again — once the transaction has had a moment to finish (`conflictWait`).
      if (!(error instanceof ConditionalCheckFailedException || error instanceof TransactionConflictException)) throw error;
      this.basis.delete(id(key));
      if (error instanceof TransactionConflictException) await this.sleep(conflictWait());
      return false;
    }
    this.remember(item);
    return true;
  }

  /** The seal of the item at `key` now (undefined when there is none): what `landedEarlier` compares with the one a write left. */
  private async sealAt(key: Key): Promise<unknown> {
    // The read a failed condition makes anyway (storage-ledger.ts `update`), authorized as one.
    this.guarded({ read: [key] });
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: keyAttributes(key), ConsistentRead: true }));
    return result.Item && fromAttributes(result.Item)['seal'];
  }

  /**
   * One TransactWriteItems: a Put per item written, a ConditionCheck per item only read, each on
   * the seal read (or the item's absence). Cancelled as a whole when a condition failed
   * (`ConditionalCheckFailed` among its CancellationReasons) or it met another transaction on
   * one of its items (`TransactionConflict`): both mean "read again" (a conflict after a short
   * wait, `conflictWait`). IAM: dynamodb:PutItem and
   * dynamodb:ConditionCheckItem on the table (infra/ledger-table.ts).
   */
  protected async putItems(writes: readonly ItemWrite[]): Promise<boolean> {
    const outcome = await this.transact(writes);
    if (outcome === 'written') return true;
    for (const { key } of writes) this.basis.delete(id(key));
    // Only a conflict waits: a failed condition means the item changed, and is read again at once.
    if (outcome === 'conflict') await this.sleep(conflictWait());
    return false;
  }

  // A write on handed versions (EngineVersions `putChecked`): the items remembered are left as they
  // are on a refusal (the versions were handed, not read here); a conflict waits as putItems' does.
  private async putChecked(writes: readonly ItemWrite[]): Promise<'written' | 'changed' | 'conflict'> {
    const outcome = await this.transact(writes);
    if (outcome === 'conflict') await this.sleep(conflictWait());
    return outcome;
  }

  /** The TransactWriteItems of `putItems`: written, refused on a condition (`changed`), or cancelled by another transaction on one of its items (`conflict`). */
  private async transact(writes: readonly ItemWrite[]): Promise<'written' | 'changed' | 'conflict'> {
    const items = await Promise.all(writes.map(async ({ key, item }) => item && (await this.sealed(key, item))));
    const TransactItems = writes.map(({ key, expected }, index) => {
      const item = items[index];
      return item ? { Put: { TableName: this.tableName, Item: attributes(item), ...ifUnchanged(expected) } } : { ConditionCheck: { TableName: this.tableName, Key: keyAttributes(key), ...ifUnchanged(expected) } };
    });
    try {
      await this.client.send(new TransactWriteItemsCommand({ TransactItems }));
    } catch (error) {
      const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []).map((reason) => reason.Code) : [];
      if (reasons.includes('ConditionalCheckFailed')) return 'changed';
      if (reasons.includes('TransactionConflict')) return 'conflict';
      throw error;
    }
    items.forEach((item, index) => {
      if (!item) return;
      this.remember(item);
      this.writtenSeals.set(writes[index]!.item!, item['seal'] as string);
    });
    return 'written';
  }

  /** The seal each item given to `putItems` was written with (`versionOf`), while the caller holds the item. */
  private readonly writtenSeals = new WeakMap<Stored, string>();

  // A version is the item's seal attribute (what a condition compares: `ifSeal`).
  protected readonly versions: EngineVersions = {
    versionOf: (stored) => {
      const seal = this.writtenSeals.get(stored) ?? stored.basis;
      return typeof seal === 'string' ? seal : undefined;
    },
    atVersion: (mark) => ({ record: {}, meta: {}, basis: mark }),
    putChecked: (writes) => this.putChecked(writes),
    seal: async (runId, sealed) => (await this.seals()).seal(handedKey(runId), sealed),
  };

  /**
   * A contended update's wait before it reads again (storage-ledger.ts `contended`): "full jitter"
   * exponential backoff, as AWS advises for writers racing for one item, so that a day's first
   * leases of a fleet budget spread out instead of retrying in lockstep
   * (https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/).
   */
  protected override backoff(attempt: number): Promise<void> {
    return this.sleep(Math.ceil(Math.random() * Math.min(CONTENDED_WAIT_MAX_MS, CONFLICT_WAIT_MS * 2 ** attempt)));
  }

  /** The item as stored: its attributes (dynamodb-item.ts) and its seal. */
  private async sealed(key: Key, stored: Stored): Promise<Item> {
    const attributes = itemAttributes(key, stored);
    return { ...attributes, seal: (await this.seals()).seal(key, attributes) };
  }

  protected async queryPartition(pk: string, fromSk?: string, onDamaged?: (error: LedgerIntegrityError) => void): Promise<Stored[]> {
    const items = await this.queryAll(
      fromSk === undefined
        ? { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: attributes({ ':pk': pk }) }
        : { KeyConditionExpression: 'pk = :pk AND sk >= :from', ExpressionAttributeValues: attributes({ ':pk': pk, ':from': fromSk }) },
    );
    const sealer = await this.seals();
    return items.flatMap((item) => {
      try {
        return [decode(this.verified(sealer, item))!];
      } catch (error) {
        if (!(error instanceof LedgerIntegrityError) || !onDamaged) throw error;
        onDamaged(error);
        return [];
      }
    });
  }

  protected async newestRunRecords(limit: number, options: DamagedRunOptions): Promise<RunRecord[]> {
    if (this.agents) {
      for (const agent of this.agents) this.guarded({ query: { index: LedgerIndexes.runsByAgent, partition: agent } });
      const listed = (await Promise.all(this.agents.map((agent) => newestRunsOf(this.client, this.tableName, agent, limit)))).flat();
      return this.readRuns(newestRuns(listed, limit).map(({ runId }) => runId), options);
    }
    // A scan reads the table in its keys' hash order, not by age: the newest `limit` runs are known
    // only once every page is read (stopping at `limit` runs listed whichever came first). Memory
    // stays bounded by keeping the newest as it goes.
    const runs: RunRecord[] = [];
    for await (const items of this.scanOfKind('run')) {
      const sealer = await this.seals();
      for (const item of items) {
        const run = this.trusted(sealer, item, options);
        if (run) runs.push(strip(run) as unknown as RunRecord);
      }
      if (runs.length > 2 * limit) runs.splice(0, runs.length, ...newestRuns(runs, limit));
    }
    return runs;
  }

  protected async queryRunsOf(agent: string, limit: number, options: DamagedRunOptions & { notAfter?: string }): Promise<RunRecord[]> {
    const runs = await this.readRuns((await newestRunsOf(this.client, this.tableName, agent, limit, options.notAfter)).map(({ runId }) => runId), options);
    return runs.filter((run) => run.agent === agent);
  }

  /** The runs of these ids, each read itself, consistently (an index is eventually consistent); one gone since is left out, a damaged one named. */
  private async readRuns(runIds: readonly string[], options: DamagedRunOptions): Promise<RunRecord[]> {
    const runs = await Promise.all(
      runIds.map(async (runId) => {
        try {
          return await this.getRun(runId);
        } catch (error) {
          return damaged(runId, error, options);
        }
      }),
    );
    return runs.filter((run): run is RunRecord => run !== undefined);
  }

  protected async queryRunning(options: DamagedRunOptions): Promise<RunRecord[]> {
    // The index projects only the run id (a run record changes at every step; a full copy in the
    // index would be rewritten with it): each run is then read itself, consistently, and checked
    // again (the index is eventually consistent).
    const keys = await this.queryAll({ IndexName: LedgerIndexes.runningRuns, KeyConditionExpression: 'runningRun = :running', ExpressionAttributeValues: attributes({ ':running': RUNNING }) });
    const runs = await Promise.all(
      keys.map(async ({ runId }) => {
        try {
          return await this.getRun(String(runId));
        } catch (error) {
          return damaged(String(runId), error, options);
        }
      }),
    );
    return runs.filter((run) => run !== undefined);
  }

  protected async approvalById(approvalId: string): Promise<Key | undefined> {
    const result = await this.client.send(
      new QueryCommand({ TableName: this.tableName, IndexName: LedgerIndexes.byApprovalId, KeyConditionExpression: 'approvalId = :id', ExpressionAttributeValues: attributes({ ':id': approvalId }) }),
    );
    const item = result.Items?.[0] && (fromAttributes(result.Items[0]) as unknown as ApprovalRecord);
    return item && { pk: runKey(item.runId).pk, sk: approvalSkOf(item) };
  }

  protected async effectKeys(): Promise<string[]> {
    // A scan of the keys alone: each effect is then read itself, consistently, and verified.
    const keys: string[] = [];
    for await (const items of this.scanOfKind('effect', 'pk')) for (const item of items) keys.push(String(item['pk']).slice(EFFECT_PK.length));
    return keys;
  }

  /** The items of one `kind` (only `projection`'s attributes, if named), a scan page at a time (guarded as a scan). */
  private async *scanOfKind(kind: string, projection?: string): AsyncGenerator<Record<string, unknown>[]> {
    this.guarded({ scan: true });
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: '#kind = :kind',
          ...(projection && { ProjectionExpression: projection }),
          ExpressionAttributeNames: { '#kind': 'kind' },
          ExpressionAttributeValues: attributes({ ':kind': kind }),
          ExclusiveStartKey: start,
        }),
      );
      yield (page.Items ?? []).map(fromAttributes);
      start = page.LastEvaluatedKey;
    } while (start);
  }

  protected async queryPendingApprovals(): Promise<ApprovalRecord[]> {
    // An index holds a projection of the items (never the task token): not the item its seal covers.
    const items = await this.queryAll({ IndexName: LedgerIndexes.pendingApprovals, KeyConditionExpression: 'pendingApproval = :pending', ExpressionAttributeValues: attributes({ ':pending': PENDING }) });
    return items.map(strip).filter((item) => item['kind'] === 'approval') as unknown as ApprovalRecord[];
  }

  /**
   * A plain put, outside the seal: the token is a capability Step Functions issues and checks
   * itself (a forged one wakes nothing), and its own partition lets IAM keep it from every role
   * but the approval functions' (dynamodb:LeadingKeys, infra/ledger-table.ts).
   */
  protected async putTaskToken(key: Key, taskToken: string): Promise<void> {
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: attributes({ ...key, taskToken, expiresAt: expiresAt(new Date()) }) }));
  }

  protected async readTaskToken(key: Key): Promise<string | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: keyAttributes(key), ConsistentRead: true }));
    const token = result.Item && fromAttributes(result.Item)['taskToken'];
    return typeof token === 'string' ? token : undefined;
  }

  // Large values by reference (ledger/blobs.ts): a run's in their own partition, so the
  // conversation's queries never read them; an effect's beside its record (read by key only). Plain puts: the same digest is the same chunks, so a retry's
  // overwrite changes nothing.
  protected async writeBlob(keys: readonly Key[], chunks: readonly string[]): Promise<void> {
    const expires = expiresAt(new Date());
    await Promise.all(
      chunks.map((data, index) => this.client.send(new PutItemCommand({ TableName: this.tableName, Item: attributes({ ...keys[index]!, kind: 'blob', data, expiresAt: expires }) }))),
    );
  }

  protected async readBlob(pk: string, prefix: string): Promise<string[]> {
    const chunks = await this.queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: attributes({ ':pk': pk, ':prefix': prefix }),
      ProjectionExpression: '#data',
      ExpressionAttributeNames: { '#data': 'data' },
    });
    return chunks.map((item) => String(item['data']));
  }

  // ── retention (`savepoint prune`, pruning.ts) ─────────────────────────────────────────────

  /**
   * A run's items in key order, its own partitions' (keys and seals only: `partitionKeys`), then
   * its task tokens' keys, as its approvals give them: a token is a capability, only the approval
   * functions read one (and the operator's grant does not: infra/ledger-table.ts), so a prune
   * deletes it by its key, unread, and its digest covers the key alone.
   */
  protected async queryRunItems(runId: string, first?: number): Promise<RunItem[]> {
    const [runPk, tokenPk, blobPk] = runPartitions(runId);
    const own = await this.partitionKeys(runPk!, first);
    if (first !== undefined) return own.map(runItem);
    const tokens = own.filter((item) => String(item['sk']).endsWith('#APPROVAL')).map((item) => ({ pk: tokenPk!, sk: item['sk'] }));
    return [...own, ...tokens, ...(await this.partitionKeys(blobPk!))].map(runItem);
  }

  /**
   * A conditional DeleteItem per delete with a condition (IF #seal = :seal read), in order; the
   * others with BatchWriteItem (`deleteAll`).
   */
  protected async deleteItems(deletes: readonly ItemDelete[]): Promise<boolean[]> {
    const deleted: boolean[] = [];
    for (const { key, expected } of deletes) deleted.push(expected ? await this.deleteIfUnchanged(key, expected.basis) : true);
    await this.deleteAll(deletes.filter((item) => !item.expected).map(({ key }) => key));
    return deleted;
  }

  /** The keys and seals of a partition's items (and what `writeKeyOf` reads), at most `limit` of them. */
  private async partitionKeys(pk: string, limit?: number): Promise<Item[]> {
    this.guarded({ query: { pk } });
    const query = {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: attributes({ ':pk': pk }),
      ProjectionExpression: 'pk, sk, #seal, #kind, #effect, #key',
      ExpressionAttributeNames: { '#seal': 'seal', '#kind': 'kind', '#effect': 'effect', '#key': 'idempotencyKey' },
    };
    if (limit === undefined) return this.queryAll(query);
    const page = await this.client.send(new QueryCommand({ TableName: this.tableName, ConsistentRead: true, Limit: limit, ...query }));
    return (page.Items ?? []).map(fromAttributes);
  }

  /** DeleteItem IF the seal is still `seal`; false when the item changed (or is gone). */
  private async deleteIfUnchanged(key: Key, seal: unknown): Promise<boolean> {
    this.guarded({ delete: [key] });
    try {
      await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: keyAttributes(key), ...ifSeal(seal) }));
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // A delete that landed, whose answer was lost and that the SDK retried, finds its item gone (lost-answers.ts).
      if (!(await landedEarlier(error, undefined, () => this.sealAt(key)))) return false;
    }
    this.basis.delete(id(key));
    return true;
  }

  /**
   * Deletes `keys` with BatchWriteItem, by DynamoDB's rules for it
   * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html): at
   * most 25 requests and 16 MB a call — keys only here, at most 2 KB + 1 KB each, so 25 of them are
   * far under 16 MB — and what it leaves in `UnprocessedItems` (throttled, not failed) is sent
   * again, with exponential backoff as the reference asks. No condition can be given to a
   * BatchWriteItem delete: only what nothing writes to any more is deleted this way (pruning.ts).
   * IAM: `dynamodb:BatchWriteItem`, every key's pk as `dynamodb:LeadingKeys`.
   */
  private async deleteAll(keys: readonly Key[]): Promise<void> {
    for (let start = 0; start < keys.length; start += DYNAMODB_BATCH_WRITE_MAX_ITEMS) {
      const batch = keys.slice(start, start + DYNAMODB_BATCH_WRITE_MAX_ITEMS);
      this.guarded({ delete: batch, batch: true });
      let requests: NonNullable<BatchWriteItemCommandOutput['UnprocessedItems']>[string] | undefined = batch.map((key) => ({ DeleteRequest: { Key: keyAttributes(key) } }));
      for (let round = 0; requests && requests.length > 0; round++) {
        if (round >= 8) throw new Error(`prune: DynamoDB left ${requests.length} deletes unprocessed after ${round} rounds; run prune again to finish`);
        if (round > 0) await this.sleep(Math.min(1_000, 20 * 2 ** round));
        const result: BatchWriteItemCommandOutput = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.tableName]: requests } }));
        requests = result.UnprocessedItems?.[this.tableName];
      }
      for (const key of batch) this.basis.delete(id(key));
    }
  }

  // ── the table ───────────────────────────────────────────────────────────────────────────

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
    this.basis.set(`${item['pk']}|${item['sk']}`, cloneItem(item));
  }

  private async queryAll(input: Pick<QueryCommandInput, 'IndexName' | 'KeyConditionExpression' | 'ExpressionAttributeValues' | 'ProjectionExpression' | 'ExpressionAttributeNames'>): Promise<Item[]> {
    const items: Item[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(new QueryCommand({ TableName: this.tableName, ConsistentRead: input.IndexName ? undefined : true, ...input, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) items.push(fromAttributes(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
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

/**
 * How long a write that met a transaction in flight waits before it reads again: a random time up
 * to `CONFLICT_WAIT_MS` (DynamoDB's guide asks for a retry with backoff on conflicts; the jitter
 * keeps the sibling calls of a turn, counting on one run item, from meeting again in step). The
 * transactions it meets are short (one write of a few items), and `update` tries 20 times.
 */
const CONFLICT_WAIT_MS = 25;
/** The longest wait between two attempts of a contended update (`backoff`). */
const CONTENDED_WAIT_MAX_MS = 1_000;
const conflictWait = () => Math.ceil(Math.random() * CONFLICT_WAIT_MS);

type Item = Record<string, unknown>;

/**
 * Items to and from DynamoDB's attribute values: util-dynamodb's `marshall` and `unmarshall`, with
 * the options the document client (lib-dynamodb) was given, applied here to the few fields of each
 * request that hold items, keys or values, instead of by the document client's middleware, which
 * walks every command's input and output for them.
 *
 * convertClassInstanceToMap: the SDK takes any object with an own `constructor` key (which a
 * model's tool input may have) for a class instance and refuses to marshall it. Records are plain
 * JSON data (times are ISO strings, as their types say), so every object is a map; the price is
 * that a stray class instance (a Date) would be stored as an empty map, not rejected.
 */
const MARSHALL_OPTIONS = { removeUndefinedValues: true, convertClassInstanceToMap: true } as const;
const attributes = (values: Record<string, unknown>): Record<string, AttributeValue> => marshall(values, MARSHALL_OPTIONS);
const fromAttributes = (item: Record<string, AttributeValue>): Item => unmarshall(item);
/** A key's attributes: two strings, as the table's schema has them (infra/ledger-table.ts). */
const keyAttributes = (key: Key): Record<string, AttributeValue> => ({ pk: { S: key.pk }, sk: { S: key.sk } });

/** An item a read found absent (the basis of a put conditional on its absence). */
const ABSENT = Symbol('absent');
const id = (key: Key) => `${key.pk}|${key.sk}`;

/** An item as the protocol reads it: its record, its storage attributes, its seal as the basis of a put. */
function decode(item: Item | undefined): Stored | undefined {
  if (!item) return undefined;
  // countedSteps: a list; an item written before the window holds a set, whose order is lost (its first
  // count after the upgrade keeps 64 of its keys, whichever they are).
  const { countedSteps, guardReasons, expiresAt: expires } = item as { countedSteps?: string[] | Set<string>; guardReasons?: Set<string>; expiresAt?: number };
  return {
    record: strip(item),
    meta: { ...(countedSteps && { countedSteps: [...countedSteps] }), ...(guardReasons && { guardReasons: [...guardReasons] }), ...(expires !== undefined && { expiresAt: expires }) },
    basis: item['seal'],
  };
}

/** An item of a run's as a prune reads it (pruning.ts `RunItem`): its digest covers its key and seal. */
function runItem(item: Item): RunItem {
  const writeKey = writeKeyOf(item);
  return { key: { pk: String(item['pk']), sk: String(item['sk']) }, basis: item['seal'], digest: `${item['pk']}\t${item['sk']}\t${item['seal'] ?? ''}`, ...(writeKey !== undefined && { writeKey }) };
}

/** Drops the storage-only attributes so records compare equal to what was written. */
function strip(item: Item): Item {
  const { pk: _pk, sk: _sk, expiresAt: _expires, pendingApproval: _pending, runningRun: _running, runAgent: _agent, countedSteps: _counted, guardReasons: _reasons, seal: _seal, taskToken: _legacyToken, ...rest } = item;
  return rest;
}
