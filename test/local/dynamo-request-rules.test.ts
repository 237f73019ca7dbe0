import { BatchGetItemCommand, type BatchGetItemCommandInput } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../lambdas/define.js';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { itemAttributes } from '../../lambdas/ledger/dynamodb-item.js';
import { callKey } from '../../lambdas/ledger/protocol.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { DYNAMODB_BATCH_GET_MAX_BYTES, DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES } from '../../lambdas/shared/limits.js';
import { AGGREGATE_KEY_MAX_BYTES, aggregateApproval, reserveAmount } from '../../lambdas/tools/aggregates.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { documentClient } from '../support/document-client.js';

/**
 * DynamoDB's request rules the ledger meets, on dynalite through the twin with the real SDK: a key
 * counted in UTF-8 bytes (local/aws/dynamodb-key-size.ts), a BatchGetItem's bounds
 * (local/aws/dynamodb-batch-get.ts), and what the ledger does about each — an aggregate key from
 * the model's arguments bounded where it is made (tools/aggregates.ts), a BatchGetItem's
 * UnprocessedKeys read again until every key is read (dynamodb-ledger.ts `read`).
 */
let dynamo: LocalDynamo;
let doc: DynamoDBDocumentClient;
let tables = 0;
let tableInput: (name: string) => Parameters<typeof ensureTable>[1];
beforeAll(async () => {
  dynamo = await startDynamo();
  doc = documentClient(dynamo);
  const template = await cachedTemplate('agent');
  tableInput = (name) => ledgerTableFromTemplate(template, name);
});
afterAll(async () => dynamo?.close());

async function newTable(): Promise<string> {
  const table = `rules-${++tables}`;
  await ensureTable(dynamo.client, tableInput(table));
  return table;
}

// Two bytes of UTF-8 each ("é"), three ("€"): dynalite counted them one each.
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const refusal = (send: Promise<unknown>) => send.then(() => 'written', (error: unknown) => error);

describe("the twin's DynamoDB measures keys in UTF-8 bytes, as DynamoDB does (ValidationException)", () => {
  it('refuses a partition key over 2048 bytes and a sort key over 1024, however few their characters', async () => {
    const TableName = await newTable();
    const fits = 'é'.repeat(1024);
    expect(bytes(fits)).toBe(2048);
    await doc.send(new PutCommand({ TableName, Item: { pk: fits, sk: '€'.repeat(341) } }));
    expect((await doc.send(new GetCommand({ TableName, Key: { pk: fits, sk: '€'.repeat(341) }, ConsistentRead: true }))).Item).toBeDefined();

    const longPk = await refusal(doc.send(new PutCommand({ TableName, Item: { pk: 'é'.repeat(1025), sk: 's' } })));
    expect(longPk).toMatchObject({ name: 'ValidationException' });
    expect((longPk as Error).message).toMatch(/Size of hashkey has exceeded the maximum size limit of ?2048 bytes/);
    const longSk = await refusal(doc.send(new PutCommand({ TableName, Item: { pk: 'p', sk: '€'.repeat(342) } })));
    expect((longSk as Error).message).toMatch(/Aggregated size of all range keys has exceeded the size limit of 1024 bytes/);
    // A read by such a key is refused too, and a transaction's ConditionCheck on it.
    expect(await refusal(doc.send(new GetCommand({ TableName, Key: { pk: '€'.repeat(683), sk: 's' } })))).toMatchObject({ name: 'ValidationException' });
    const checked = await refusal(doc.send(new TransactWriteCommand({ TransactItems: [{ ConditionCheck: { TableName, Key: { pk: 'p', sk: '€'.repeat(342) }, ConditionExpression: 'attribute_not_exists(pk)' } }] })));
    expect(checked).toMatchObject({ name: 'ValidationException' });
  });

  it("refuses an item whose index key is over the bound (the runsByAgent index's runAgent)", async () => {
    const TableName = await newTable();
    const refused = await refusal(doc.send(new PutCommand({ TableName, Item: { pk: 'RUN#r', sk: 'RUN', runAgent: '€'.repeat(683), createdAt: '2026-12-07T00:00:00.000Z' } })));
    expect(refused).toMatchObject({ name: 'ValidationException' });
    expect((refused as Error).message).toMatch(/Size of hashkey has exceeded/);
  });
});

describe("the ledger's keys within DynamoDB's bounds", () => {
  const agent = { name: 'a'.repeat(40) };
  const pay = defineTool({
    name: 't'.repeat(64),
    description: 'Pays.',
    input: z.object({ account: z.string(), cents: z.number().int() }),
    effect: 'write',
    aggregate: { key: (args) => args.account, amount: (args) => args.cents, threshold: 500 },
    execute: async () => ({}),
  });
  const call = { runId: 'r1', turn: 1, call: 1, approved: false };

  it("adds up an aggregate key at its bound on DynamoDB, and asks a person for a longer one instead of failing the step on DynamoDB's ValidationException", async () => {
    const ledger = new DynamoDbLedger(dynamo.client, await newTable(), ephemeralSealer());
    // The longest agent and tool names, and a key of AGGREGATE_KEY_MAX_BYTES: DynamoDB takes the item.
    const longest = '€'.repeat(Math.floor(AGGREGATE_KEY_MAX_BYTES / 3)) + 'x'.repeat(AGGREGATE_KEY_MAX_BYTES % 3);
    expect(bytes(longest)).toBe(AGGREGATE_KEY_MAX_BYTES);
    expect(await reserveAmount(ledger, agent, { tool: pay, args: { account: longest, cents: 100 } }, call, new Date())).toBe(true);
    expect(aggregateApproval({ tools: [pay] }, pay, { account: longest, cents: 100 }, { calls: [] })).toBeUndefined();

    // 700 characters, 2,100 bytes: the ledger's item would be refused by DynamoDB; a person is asked.
    const over = { account: '€'.repeat(700), cents: 100 };
    expect(aggregateApproval({ tools: [pay] }, pay, over, { calls: [] })).toMatchObject({ summary: expect.stringContaining(`at most ${AGGREGATE_KEY_MAX_BYTES} UTF-8 bytes`) });
    expect(await reserveAmount(ledger, agent, { tool: pay, args: over }, call, new Date())).toBe(true);
  });
});

describe("the ledger's BatchGetItem reads every key DynamoDB leaves unprocessed", () => {
  it('loadStep reads 40 calls of 300 KB each, over as many rounds as DynamoDB answers, waiting with the backoff it was given', async () => {
    const table = await newTable();
    const sealer = ephemeralSealer();
    // Each call's item as the ledger stores it (sealed), its arguments 300 KB: 12 MB for the step.
    await Promise.all(
      Array.from({ length: 40 }, async (_, index) => {
        const key = callKey('big', 1, index + 1);
        const attributes = itemAttributes(key, { record: { kind: 'tool', runId: 'big', turn: 1, call: index + 1, name: 'big', args: { text: 'x'.repeat(300_000) } }, meta: {} });
        await doc.send(new PutCommand({ TableName: table, Item: { ...attributes, seal: sealer.seal(key, attributes) } }));
      }),
    );
    const waits: number[] = [];
    const ledger = new DynamoDbLedger(dynamo.client, table, sealer, async (ms) => void waits.push(ms));
    const read = await ledger.loadStep('big', { calls: Array.from({ length: 40 }, (_, index) => ({ turn: 1, call: index + 1 })) });
    expect(read.calls.map((record) => record.call).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
    // 1 MB of the run's partition a round, as DynamoDB answers: three calls, 14 rounds, each after the first after its wait.
    expect(waits).toHaveLength(13);
    expect(waits.slice(0, 6)).toEqual([40, 80, 160, 320, 640, 1_000]);
  });

  it('loadStep reads a step of 1.2 MB of one partition in two rounds: DynamoDB answers 1 MB of it, then the key it left', async () => {
    const table = await newTable();
    const sealer = ephemeralSealer();
    await Promise.all(
      [1, 2, 3, 4].map(async (call) => {
        const key = callKey('large', 1, call);
        const attributes = itemAttributes(key, { record: { kind: 'tool', runId: 'large', turn: 1, call, name: 'big', args: { text: 'x'.repeat(300_000) } }, meta: {} });
        await doc.send(new PutCommand({ TableName: table, Item: { ...attributes, seal: sealer.seal(key, attributes) } }));
      }),
    );
    const waits: number[] = [];
    const ledger = new DynamoDbLedger(dynamo.client, table, sealer, async (ms) => void waits.push(ms));
    const read = await ledger.loadStep('large', { calls: [1, 2, 3, 4].map((call) => ({ turn: 1, call })) });
    expect(read.calls.map((record) => record.call).sort()).toEqual([1, 2, 3, 4]);
    expect(waits).toEqual([40]);
  });
});

describe("the twin's own DynamoDB answers carry DynamoDB's headers", () => {
  it('answers BatchGetItem and TransactWriteItems, and their refusals, with a request id and the CRC32 of the body', async () => {
    const TableName = await newTable();
    const written = await doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk: 'RUN#h', sk: 's0', data: 'x' } } }] }));
    expect(written.$metadata.requestId).toMatch(/^[A-Z0-9]{52}$/);
    const post = (target: string, body: unknown) =>
      fetch(`${dynamo.endpoint}/`, { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${target}` }, body: JSON.stringify(body) });
    const answers = [
      await post('BatchGetItem', { RequestItems: { [TableName]: { Keys: [{ pk: { S: 'RUN#h' }, sk: { S: 's0' } }] } } }),
      await post('BatchGetItem', { RequestItems: { [TableName]: { Keys: [{ pk: { S: 'RUN#h' }, sk: { S: 's0' } }, { pk: { S: 'RUN#h' }, sk: { S: 's0' } }] } } }),
      await post('TransactWriteItems', { TransactItems: [] }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 400, 400]);
    for (const answer of answers) {
      const body = await answer.text();
      expect(answer.headers.get('x-amzn-requestid')).toMatch(/^[A-Z0-9]{52}$/);
      expect(answer.headers.get('x-amz-crc32')).toBe(String(crc32(body)));
    }
  });
});

describe("the twin's BatchGetItem answers as DynamoDB does: at most 16 MB, 1 MB of one partition, 100 keys (API_BatchGetItem)", () => {
  // An item of 300 KB and a few bytes (dynalite's measure: names and values, a string's length).
  const data = 'x'.repeat(300_000);
  const itemBytes = (pk: string, sk: string) => 'pk'.length + pk.length + 'sk'.length + sk.length + 'data'.length + data.length;
  const keyOf = (pk: string, sk: string) => ({ pk: { S: pk }, sk: { S: sk } });
  const put = (TableName: string, pk: string, sks: readonly string[]) => Promise.all(sks.map((sk) => doc.send(new PutCommand({ TableName, Item: { pk, sk, data } }))));
  const batchGet = (RequestItems: BatchGetItemCommandInput['RequestItems']) => dynamo.client.send(new BatchGetItemCommand({ RequestItems }));
  const sksOf = (count: number) => Array.from({ length: count }, (_, index) => `s${index}`);

  it('answers at most 1 MB of the items of one partition, the keys left as UnprocessedKeys (with the request\'s ConsistentRead), read by the next request', async () => {
    const TableName = await newTable();
    await put(TableName, 'RUN#one', sksOf(4));
    const first = await batchGet({ [TableName]: { Keys: sksOf(4).map((sk) => keyOf('RUN#one', sk)), ConsistentRead: true } });
    // Three fit in 1 MB (1,048,576 bytes), four do not.
    expect(3 * itemBytes('RUN#one', 's0')).toBeLessThanOrEqual(DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES);
    expect(first.Responses?.[TableName]).toHaveLength(3);
    const answered = new Set(first.Responses![TableName]!.map((item) => item['sk']!.S));
    expect(first.UnprocessedKeys).toEqual({ [TableName]: { Keys: sksOf(4).filter((sk) => !answered.has(sk)).map((sk) => keyOf('RUN#one', sk)), ConsistentRead: true } });
    const second = await batchGet(first.UnprocessedKeys);
    expect(second.Responses?.[TableName]).toHaveLength(1);
    expect(second.UnprocessedKeys).toEqual({});
  });

  it('measures an item as DynamoDB does, in UTF-8 bytes: four items of 150,000 "é" (300 KB each, 150,000 UTF-16 units) of one partition, three answered', async () => {
    const TableName = await newTable();
    const accented = 'é'.repeat(150_000);
    await Promise.all(sksOf(4).map((sk) => doc.send(new PutCommand({ TableName, Item: { pk: 'RUN#é', sk, data: accented } }))));
    const first = await batchGet({ [TableName]: { Keys: sksOf(4).map((sk) => keyOf('RUN#é', sk)) } });
    // dynalite's measure (a string's UTF-16 units) put all four in 600 KB; DynamoDB's bytes, 1.2 MB.
    expect(4 * (accented.length + 100)).toBeLessThan(DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES);
    expect(3 * (bytes(accented) + 100)).toBeLessThan(DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES);
    expect(4 * bytes(accented)).toBeGreaterThan(DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES);
    expect(first.Responses?.[TableName]).toHaveLength(3);
    expect(first.UnprocessedKeys?.[TableName]?.Keys).toHaveLength(1);
    // Its answer carries a request id, as DynamoDB's do (and dynalite's to the other requests).
    expect(first.$metadata.requestId).toMatch(/^[A-Z0-9]{52}$/);
  });

  it("answers 1 MB of each partition in one response: six items of 300 KB on two partitions, 1.8 MB (past dynalite's own 1.4 MB)", async () => {
    const TableName = await newTable();
    await Promise.all([put(TableName, 'RUN#a', sksOf(3)), put(TableName, 'RUN#b', sksOf(3))]);
    const answer = await batchGet({ [TableName]: { Keys: ['RUN#a', 'RUN#b'].flatMap((pk) => sksOf(3).map((sk) => keyOf(pk, sk))) } });
    expect(answer.Responses?.[TableName]).toHaveLength(6);
    expect(answer.UnprocessedKeys).toEqual({});
  });

  it('answers at most 16 MB in all: of 100 items of 300 KB, each on its own partition, as many as fit', async () => {
    const TableName = await newTable();
    const pks = Array.from({ length: 100 }, (_, index) => `RUN#${String(index).padStart(3, '0')}`);
    await Promise.all(pks.map((pk) => put(TableName, pk, ['s0'])));
    const answer = await batchGet({ [TableName]: { Keys: pks.map((pk) => keyOf(pk, 's0')) } });
    const fit = Math.floor(DYNAMODB_BATCH_GET_MAX_BYTES / itemBytes(pks[0]!, 's0'));
    expect(fit).toBe(55);
    expect(answer.Responses?.[TableName]).toHaveLength(fit);
    expect(answer.UnprocessedKeys?.[TableName]?.Keys).toHaveLength(100 - fit);
  });

  it('refuses more than 100 keys (ValidationException, naming the bound as DynamoDB does) and a key asked for twice', async () => {
    const [first, second] = [await newTable(), await newTable()];
    const keys = (count: number) => sksOf(count).map((sk) => keyOf('RUN#k', sk));
    const refused = (RequestItems: BatchGetItemCommandInput['RequestItems']) => refusal(batchGet(RequestItems));
    // More than 100 of one table: the bound of its Keys; of all the tables together: the API's own message.
    expect(await refused({ [first]: { Keys: keys(101) } })).toMatchObject({ name: 'ValidationException', message: expect.stringMatching(/member\.keys' failed to satisfy constraint: Member must have length less than or equal to 100$/) });
    expect(await refused({ [first]: { Keys: keys(60) }, [second]: { Keys: keys(41) } })).toMatchObject({ name: 'ValidationException', message: 'Too many items requested for the BatchGetItem call' });
    expect(await batchGet({ [first]: { Keys: keys(60) }, [second]: { Keys: keys(40) } })).toMatchObject({ Responses: { [first]: [], [second]: [] }, UnprocessedKeys: {} });
    expect(await refused({ [first]: { Keys: [...keys(2), ...keys(1)] } })).toMatchObject({ name: 'ValidationException', message: 'Provided list of item keys contains duplicates' });
  });
});
