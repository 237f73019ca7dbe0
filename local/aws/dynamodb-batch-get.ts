import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DYNAMODB_BATCH_GET_MAX_BYTES, DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES } from '../../lambdas/shared/limits.js';
import { bodyText } from './dynamodb-transactions.js';
import { wireItemSize } from './dynamodb-item-size.js';
import { replyDynamo } from './dynamodb-reply.js';

/**
 * BatchGetItem answered by DynamoDB's rules
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html): "A
 * single operation can retrieve up to 16 MB of data, which can contain as many as 100 items.
 * BatchGetItem returns a partial result if the response size limit is exceeded, [...] more than
 * 1MB per partition is requested, [...]": the keys not read are answered as `UnprocessedKeys`, for
 * the caller to ask for again (the ledger's `loadStep` does: lambdas/ledger/dynamodb-ledger.ts `read`).
 *
 * dynalite answers a partial result by a bound of its own, about 1.4 MB of the whole response (1 MB
 * and an item), and knows no partition: 1.2 MB of one partition came back in one round, where
 * DynamoDB answers 1 MB and leaves the rest, and 1.8 MB of two partitions in two rounds, where
 * DynamoDB answers all of it. Here BatchGetItem is served on dynalite's store instead, by dynalite's
 * own request checks — its types and its `custom` ones, which answer what DynamoDB answers: more
 * than 100 keys of one table, "1 validation error detected: [...] Member must have length less than
 * or equal to 100", of all tables together, "Too many items requested for the BatchGetItem call", a
 * key twice, "Provided list of item keys contains duplicates" — its key checks (with the twin's
 * own: local/aws/dynamodb-key-size.ts) and its reads of the items, as its GetItem reads one.
 *
 * Of the items found, one is answered while the response stays within 16 MB and its partition's
 * items within 1 MB, each item as answered (projected, if asked) measured as DynamoDB measures one
 * (local/aws/dynamodb-item-size.ts: a string's UTF-8 bytes, where dynalite's db.itemSize counts
 * its UTF-16 units and answered more text beyond ASCII than DynamoDB would); the others' keys are
 * unprocessed, with the table's request beside them (ConsistentRead, the projection) as DynamoDB
 * answers them.
 *
 * A DynamoDB partition holds many partition key values, and splits a hot one; the twin approximates
 * a partition by one partition key value of one table, which is what a caller can know of it (a
 * step's keys are one run's: one value). The first item answered always fits (an item is at most
 * 400 KB), so every round reads at least one.
 *
 * Items come back in no particular order, as DynamoDB's do (dynalite shuffles them: so does this).
 */

const require = createRequire(import.meta.url);
/* eslint-disable @typescript-eslint/no-explicit-any -- dynalite's internals are untyped JavaScript */
const db = require('dynalite/db') as any;
const validations = require('dynalite/validations') as any;
const rules = require('dynalite/validations/batchGetItem') as any;

export const BATCH_GET_ITEM = 'DynamoDB_20120810.BatchGetItem';

type Attributes = Record<string, Record<string, unknown>>;
type KeysAndAttributes = { Keys: Attributes[]; AttributesToGet?: string[]; ConsistentRead?: boolean; ProjectionExpression?: string; ExpressionAttributeNames?: Record<string, string>; _projection?: { paths: unknown; nestedPaths: unknown } };
type Request = { RequestItems: Record<string, KeysAndAttributes>; ReturnConsumedCapacity?: string };

/** Answers one BatchGetItem request on dynalite's `store`. */
export async function serveBatchGet(store: any, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const reply = (status: number, answer: unknown) => replyDynamo(response, status, answer);
  let data: Request | null;
  try {
    data = JSON.parse(await bodyText(request)) as Request | null;
  } catch {
    data = null;
  }
  if (typeof data !== 'object' || data === null) return void reply(400, { __type: 'com.amazon.coral.service#SerializationException' });
  try {
    data = validations.checkTypes(data, rules.types) as Request;
    validations.checkValidations(data, rules.types, rules.custom, store);
    reply(200, await batchGet(store, data));
  } catch (error: any) {
    if (!error?.statusCode) throw error;
    reply(error.statusCode, error.body);
  }
}

async function batchGet(store: any, data: Request): Promise<object> {
  const Responses: Record<string, Attributes[]> = {};
  const UnprocessedKeys: Record<string, Omit<KeysAndAttributes, '_projection'>> = {};
  const capacities = new Map<string, number>();
  const reads = await Promise.all(Object.entries(data.RequestItems).map(([name, request]) => readTable(store, name, request, data.ReturnConsumedCapacity)));
  let total = 0;
  for (const { name, request, hashKey, found } of reads) {
    const partitions = new Map<string, number>();
    const items: Attributes[] = (Responses[name] = []);
    for (const { key, item, capacity } of shuffled(found)) {
      if (item) {
        const size = wireItemSize(item);
        const partition = JSON.stringify(key[hashKey]);
        const inPartition = (partitions.get(partition) ?? 0) + size;
        if (total + size > DYNAMODB_BATCH_GET_MAX_BYTES || inPartition > DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES) {
          const { _projection, Keys, ...rest } = request;
          (UnprocessedKeys[name] ??= { ...rest, Keys: [] }).Keys.push(key);
          continue;
        }
        partitions.set(partition, inPartition);
        total += size;
        items.push(item);
      }
      if (capacity) capacities.set(name, (capacities.get(name) ?? 0) + capacity);
    }
  }
  if (data.ReturnConsumedCapacity !== 'TOTAL' && data.ReturnConsumedCapacity !== 'INDEXES') return { Responses, UnprocessedKeys };
  const ConsumedCapacity = reads.map(({ name }) => ({ TableName: name, CapacityUnits: capacities.get(name) ?? 0, ...(data.ReturnConsumedCapacity === 'INDEXES' && { Table: { CapacityUnits: capacities.get(name) ?? 0 } }) }));
  return { Responses, UnprocessedKeys, ConsumedCapacity };
}

type Found = { key: Attributes; item?: Attributes; capacity?: number };

/** Every key of one table's request read, as dynalite's GetItem reads one (its key checks, projection and capacity). */
async function readTable(store: any, name: string, request: KeysAndAttributes, returnCapacity: string | undefined): Promise<{ name: string; request: KeysAndAttributes; hashKey: string; found: Found[] }> {
  const table = await new Promise<any>((resolve, reject) => store.getTable(name, (error: unknown, found: unknown) => (error ? reject(error) : resolve(found))));
  for (const key of request.Keys) {
    const invalid = db.validateKey(key, table);
    if (invalid) throw invalid;
  }
  const invalidPath = db.validateKeyPaths(request._projection?.nestedPaths, table);
  if (invalidPath) throw invalidPath;
  const paths = request._projection ? request._projection.paths : request.AttributesToGet;
  const itemDb = store.getItemDb(name);
  const options = { TableName: name, ConsistentRead: request.ConsistentRead, ReturnConsumedCapacity: returnCapacity };
  const found = await Promise.all(
    request.Keys.map(
      (key) =>
        new Promise<Found>((resolve, reject) =>
          itemDb.get(db.createKey(key, table), (error: any, stored: Attributes | undefined) => {
            if (error && error.name !== 'NotFoundError') return reject(error);
            const item = stored && (paths ? (db.mapPaths(paths, stored) as Attributes) : stored);
            resolve({ key, item, capacity: db.addConsumedCapacity(options, true, stored)?.CapacityUnits });
          }),
        ),
    ),
  );
  const hashKey = (table.KeySchema as { AttributeName: string; KeyType: string }[]).find((element) => element.KeyType === 'HASH')!.AttributeName;
  return { name, request, hashKey, found };
}

function shuffled<T>(items: T[]): T[] {
  for (let index = items.length - 1; index >= 1; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [items[index], items[other]] = [items[other]!, items[index]!];
  }
  return items;
}
