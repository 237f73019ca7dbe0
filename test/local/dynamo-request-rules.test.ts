import { GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../lambdas/define.js';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { itemAttributes } from '../../lambdas/ledger/dynamodb-item.js';
import { callKey } from '../../lambdas/ledger/protocol.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { AGGREGATE_KEY_MAX_BYTES, aggregateApproval, reserveAmount } from '../../lambdas/tools/aggregates.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { documentClient } from '../support/document-client.js';

/**
 * DynamoDB's request rules the ledger meets, on dynalite through the twin with the real SDK: a key
 * counted in UTF-8 bytes (local/aws/dynamodb-key-size.ts), and what the ledger does about each —
 * an aggregate key from the model's arguments bounded where it is made (tools/aggregates.ts), a
 * BatchGetItem's UnprocessedKeys read again until every key is read (dynamodb-ledger.ts `read`).
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
    // The emulator answers about 1.4 MB a request (DynamoDB: 1 MB of one partition): more than 8 rounds, each after its wait.
    expect(waits.length).toBeGreaterThan(8);
    expect(waits.slice(0, 6)).toEqual([40, 80, 160, 320, 640, 1_000]);
  });
});
