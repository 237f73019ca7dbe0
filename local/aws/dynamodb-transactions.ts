import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DYNAMODB_TRANSACTION_MAX_ACTIONS, DYNAMODB_TRANSACTION_MAX_BYTES } from '../../lambdas/shared/limits.js';
import { replyDynamo } from './dynamodb-reply.js';

/**
 * TransactWriteItems for dynalite, which has none: the ledger writes a tool call and its
 * business-key effect in one transaction (lambdas/ledger/storage-ledger.ts `updatePair`). Served
 * on dynalite's own store, by its own rules — its item locks, its condition evaluation, its index
 * upkeep — and by DynamoDB's documented ones for a transaction
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html):
 * at most 100 actions, no two on the same item, at most 4 MB of items; every condition is checked
 * before anything is written, and a failed one cancels all of them with
 * `TransactionCanceledException`, whose `CancellationReasons` say, action by action, which
 * condition failed (`ConditionalCheckFailed`) and which did not (`None`).
 *
 * Only the actions the ledger uses are served (`Put`, `ConditionCheck`); `Update` and `Delete` are
 * refused by name. Every item of the transaction is locked (in one sorted order) while it is
 * checked and written: dynalite's PutItem takes the same lock, so a write already under way
 * finishes first, and none lands between the check and the write.
 *
 * A transaction in flight holds its items against other writers, by DynamoDB's rules of conflict
 * ("Transaction conflict handling in DynamoDB",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
 * a PutItem, UpdateItem or DeleteItem of one of its items is rejected with
 * `TransactionConflictException` (`conflictOfWrite`; HTTP 400, which the SDKs do not retry), and
 * a TransactWriteItems with one of its items is cancelled with `TransactionCanceledException`,
 * `TransactionConflict` the reason of that item's action. Neither waits for the other: the caller
 * decides (the ledger reads again and retries, as the guide advises for conflicts).
 *
 * A transaction is idempotent by its `ClientRequestToken`, which the SDK fills in once for a call
 * and sends again with each of its retries (API_TransactWriteItems.html, ClientRequestToken): a
 * request with the token of one that succeeded less than 10 minutes ago answers success and
 * changes nothing; with the token of one still in progress it is refused with
 * `TransactionInProgressException`; with the token but other parameters, with
 * `IdempotentParameterMismatchException`. So a transaction that committed and whose answer was
 * lost (local/aws/dynamodb-lost-answers.ts) is not applied twice by the SDK's retry.
 */

const require = createRequire(import.meta.url);
/* eslint-disable @typescript-eslint/no-explicit-any -- dynalite's internals are untyped JavaScript */
const db = require('dynalite/db') as any;
const validations = require('dynalite/validations') as any;

export const TRANSACT_WRITE_ITEMS = 'DynamoDB_20120810.TransactWriteItems';

/** Captures the store dynalite makes for its server (`db.create`), for `serveTransaction`. */
export function capturingStore<T>(start: () => T): { server: T; store: unknown } {
  const create = db.create;
  let store: unknown;
  db.create = (options: unknown) => (store = create(options));
  try {
    return { server: start(), store };
  } finally {
    db.create = create;
  }
}

type Action = { kind: 'Put' | 'ConditionCheck'; input: any; table?: any; key?: string };

/** The items of each store's transactions in flight (`table\0key`): what another write conflicts with. */
const inFlight = new WeakMap<object, Set<string>>();
function itemsInFlight(store: object): Set<string> {
  let items = inFlight.get(store);
  if (!items) inFlight.set(store, (items = new Set()));
  return items;
}
/** Each store's transactions by their ClientRequestToken: the request, and when it succeeded (absent while in progress). */
const byToken = new WeakMap<object, Map<string, { text: string; succeededAt?: number }>>();
/** How long a token holds after the request that used it completed. */
const TOKEN_WINDOW_MS = 10 * 60_000;
function tokensOf(store: object): Map<string, { text: string; succeededAt?: number }> {
  let tokens = byToken.get(store);
  if (!tokens) byToken.set(store, (tokens = new Map()));
  // In order of first use: those past the window are forgotten (a token in progress is kept).
  for (const [token, { succeededAt }] of tokens) {
    if (succeededAt !== undefined && Date.now() - succeededAt > TOKEN_WINDOW_MS) tokens.delete(token);
    else if (succeededAt !== undefined) break;
  }
  return tokens;
}
const itemId = (tableName: string, key: string) => `${tableName}\u0000${key}`;

/** A reason of a cancelled transaction, as DynamoDB words it (API_CancellationReason). */
const NONE = { Code: 'None' };
const CONFLICT = { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' };

export interface TransactionOptions {
  /**
   * Awaited while a transaction holds its items, before it checks and writes them: a slow
   * transaction, so that other writes meet it in flight (dynalite's takes microseconds, DynamoDB's
   * several round trips inside the service). @default none
   */
  readonly latency?: () => Promise<void>;
}

/** Whether any transaction is in flight on `store`: until one is, no plain write can meet one (`conflictOfWrite`). */
export function transactionsInFlight(store: object): boolean {
  return (inFlight.get(store)?.size ?? 0) > 0;
}

/** The plain writes DynamoDB rejects when they meet a transaction in flight on their item. */
export const ITEM_WRITES = new Set(['DynamoDB_20120810.PutItem', 'DynamoDB_20120810.UpdateItem', 'DynamoDB_20120810.DeleteItem']);

/**
 * The error DynamoDB answers a PutItem, UpdateItem or DeleteItem (its JSON `body`) with when a
 * transaction is in flight on its item, or undefined when none is (or the request is not one
 * dynalite would serve: it answers that itself).
 */
export async function conflictOfWrite(store: any, body: string): Promise<{ __type: string; message: string } | undefined> {
  const items = inFlight.get(store);
  if (!items || items.size === 0) return undefined;
  try {
    const data = JSON.parse(body) as { TableName?: string; Item?: unknown; Key?: unknown };
    const table = await new Promise((resolve, reject) => store.getTable(data.TableName, (error: unknown, found: unknown) => (error ? reject(error) : resolve(found))));
    const key = db.createKey(data.Item ?? data.Key, table) as string;
    if (!items.has(itemId(data.TableName!, key))) return undefined;
  } catch {
    return undefined;
  }
  return { __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message: 'Transaction is ongoing for the item' };
}

/** Answers one TransactWriteItems request from its JSON body. */
export async function serveTransaction(store: any, request: IncomingMessage, response: ServerResponse, options: TransactionOptions = {}): Promise<void> {
  const reply = (status: number, body: unknown) => replyDynamo(response, status, body);
  const invalid = (message: string) => reply(400, { __type: 'com.amazon.coral.validate#ValidationException', message });
  const text = await bodyText(request);
  let body: { TransactItems?: unknown; ClientRequestToken?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return void invalid('the request body is not JSON');
  }
  const token = typeof body.ClientRequestToken === 'string' ? body.ClientRequestToken : undefined;
  const tokens = tokensOf(store);
  const known = token === undefined ? undefined : tokens.get(token);
  if (known && known.text !== text) {
    return void reply(400, { __type: 'com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException', message: 'A request with the same client token was received with different parameters' });
  }
  if (known && known.succeededAt === undefined) {
    return void reply(400, { __type: 'com.amazonaws.dynamodb.v20120810#TransactionInProgressException', message: 'The transaction with the given request token is already in progress' });
  }
  // The same request again (an SDK retry of one whose answer was lost): it succeeded once, and is not applied again.
  if (known) return void reply(200, {});
  const items = body.TransactItems;
  if (!Array.isArray(items) || items.length < 1 || items.length > DYNAMODB_TRANSACTION_MAX_ACTIONS) {
    return void invalid(`1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length between 1 and ${DYNAMODB_TRANSACTION_MAX_ACTIONS}`);
  }
  const actions: Action[] = [];
  for (const item of items as Record<string, unknown>[]) {
    const kinds = Object.keys(item ?? {});
    const kind = kinds[0];
    if (kinds.length !== 1 || (kind !== 'Put' && kind !== 'ConditionCheck')) {
      return void invalid(`TransactItems: each action must be exactly one of Put or ConditionCheck here (got ${kinds.join(', ') || 'none'}; Update and Delete are not served by the local emulator)`);
    }
    const input = item[kind] as any;
    const message = validations.validateExpressions(input);
    if (message) return void invalid(message);
    actions.push({ kind, input });
  }
  if (Buffer.byteLength(JSON.stringify(actions.map((action) => action.input.Item ?? {}))) > DYNAMODB_TRANSACTION_MAX_BYTES) return void invalid('Transaction request items exceed the 4 MB limit');
  try {
    for (const action of actions) {
      action.table = await new Promise((resolve, reject) => store.getTable(action.input.TableName, (error: unknown, table: unknown) => (error ? reject(error) : resolve(table))));
      const item = action.kind === 'Put' ? action.input.Item : action.input.Key;
      const bad = action.kind === 'Put' ? db.validateItem(item, action.table) : db.validateKey(item, action.table);
      if (bad) throw bad;
      action.key = db.createKey(item, action.table);
    }
  } catch (error: any) {
    return void reply(error?.statusCode ?? 400, error?.body ?? { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: String(error) });
  }
  const ids = actions.map((action) => itemId(action.input.TableName, action.key!));
  if (new Set(ids).size !== ids.length) return void invalid('Transaction request cannot include multiple operations on one item');
  const cancelled = (reasons: { Code: string; Message?: string }[]) =>
    reply(400, {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
      CancellationReasons: reasons,
    });

  // Checked and taken in one turn of the event loop: of two transactions on an item, one is in flight, the other cancelled.
  const busy = itemsInFlight(store);
  if (ids.some((id) => busy.has(id))) return void cancelled(ids.map((id) => (busy.has(id) ? CONFLICT : NONE)));
  for (const id of ids) busy.add(id);
  if (token !== undefined) tokens.set(token, { text });
  const tables = [...new Set(actions.map((action) => action.input.TableName as string))].sort();
  const outcome = await lockAll(store, tables, actions, async () => {
    await options.latency?.();
    const existing = await Promise.all(actions.map((action) => getItem(store.getItemDb(action.input.TableName), action.key!)));
    const reasons = actions.map((action, index) => (db.checkConditional(action.input, existing[index]) ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' } : NONE));
    if (reasons.some((reason) => reason.Code !== 'None')) return { reasons };
    for (const [index, action] of actions.entries()) {
      if (action.kind !== 'Put') continue;
      await new Promise<void>((resolve, reject) => db.updateIndexes(store, action.table, existing[index], action.input.Item, (error: unknown) => (error ? reject(error) : resolve())));
      await new Promise<void>((resolve, reject) => store.getItemDb(action.input.TableName).put(action.key, action.input.Item, (error: unknown) => (error ? reject(error) : resolve())));
    }
    return {};
  }).finally(() => {
    for (const id of ids) busy.delete(id);
    if (token !== undefined) tokens.delete(token);
  });
  // Only a success holds its token: a cancelled (or failed) transaction is decided again when it is sent again.
  if (token !== undefined && !outcome.reasons) tokens.set(token, { text, succeededAt: Date.now() });
  if (outcome.reasons) return void cancelled(outcome.reasons);
  reply(200, {});
}

/** A request's body as text (read by its events: an async iterator over it costs more than the parse of a small body). */
export function bodyText(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Runs `work` holding every item's lock (each table's in sorted key order). */
async function lockAll<T>(store: any, tables: string[], actions: Action[], work: () => Promise<T>): Promise<T> {
  const [table, ...rest] = tables;
  if (table === undefined) return work();
  const keys = actions.filter((action) => action.input.TableName === table).map((action) => action.key!).sort();
  return new Promise<T>((resolve, reject) => {
    store.getItemDb(table).lock(keys, (release: (done: () => void) => () => void) => {
      lockAll(store, rest, actions, work).then(
        (value) => release(() => resolve(value))(),
        (error: unknown) => release(() => reject(error as Error))(),
      );
    });
  });
}

function getItem(itemDb: any, key: string): Promise<unknown> {
  return new Promise((resolve, reject) => itemDb.get(key, (error: any, item: unknown) => (error && error.name !== 'NotFoundError' ? reject(error) : resolve(error ? undefined : item))));
}
