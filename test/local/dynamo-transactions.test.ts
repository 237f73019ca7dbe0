import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { documentClient } from '../support/document-client.js';

// TransactWriteItems on the emulator (local/aws/dynamodb-transactions.ts), through the real SDK, by the
// rules of https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html.
let dynamo: LocalDynamo;
let doc: DynamoDBDocumentClient;
const TableName = 'transactions';
/** Holds the next transaction in flight (`startDynamo`'s `transactions.latency`) until `open`. */
let held: { latency: () => Promise<void>; reached: Promise<void>; open: () => void } | undefined;
function holdNextTransaction(): NonNullable<typeof held> {
  let arrived!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return (held = { latency: () => ((held = undefined), arrived(), opened), reached, open });
}

beforeAll(async () => {
  dynamo = await startDynamo({ transactions: { latency: async () => held?.latency() } });
  await ensureTable(dynamo.client, {
    TableName,
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  doc = documentClient(dynamo);
});
afterAll(async () => dynamo.close());

const absent = { ConditionExpression: 'attribute_not_exists(pk)' };
const get = async (pk: string) => (await doc.send(new GetCommand({ TableName, Key: { pk, sk: 'x' }, ConsistentRead: true }))).Item;

describe('TransactWriteItems on the local emulator', () => {
  it('writes every Put when every condition holds', async () => {
    await doc.send(new PutCommand({ TableName, Item: { pk: 'checked', sk: 'x', v: 1 } }));
    await doc.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName, Item: { pk: 'a', sk: 'x', v: 1 }, ...absent } },
          { ConditionCheck: { TableName, Key: { pk: 'checked', sk: 'x' }, ConditionExpression: 'v = :one', ExpressionAttributeValues: { ':one': 1 } } },
        ],
      }),
    );
    expect(await get('a')).toMatchObject({ v: 1 });
  });

  it('fails when one condition fails, writes nothing, and names which one in CancellationReasons', async () => {
    await doc.send(new PutCommand({ TableName, Item: { pk: 'taken', sk: 'x', v: 1 } }));
    const error = await doc
      .send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk: 'b', sk: 'x', v: 1 }, ...absent } }, { Put: { TableName, Item: { pk: 'taken', sk: 'x', v: 2 }, ...absent } }] }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect((error as TransactionCanceledException).CancellationReasons?.map((reason) => reason.Code)).toEqual(['None', 'ConditionalCheckFailed']);
    expect(await get('b')).toBeUndefined();
    expect(await get('taken')).toMatchObject({ v: 1 });
  });

  it('lets exactly one of 20 concurrent transactions on the same item win', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, index) =>
        doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk: `own${index}`, sk: 'x' }, ...absent } }, { Put: { TableName, Item: { pk: 'contended', sk: 'x', by: index }, ...absent } }] })),
      ),
    );
    const won = results.flatMap((result, index) => (result.status === 'fulfilled' ? [index] : []));
    expect(won).toHaveLength(1);
    expect(await get('contended')).toMatchObject({ by: won[0] });
    for (let index = 0; index < 20; index++) expect(await get(`own${index}`)).toEqual(index === won[0] ? { pk: `own${index}`, sk: 'x' } : undefined);
  });

  it('refuses two actions on one item, more than 100 actions, and the actions it does not serve, by name', async () => {
    const put = (pk: string) => ({ Put: { TableName, Item: { pk, sk: 'x' } } });
    await expect(doc.send(new TransactWriteCommand({ TransactItems: [put('same'), put('same')] }))).rejects.toThrow(/multiple operations on one item/);
    await expect(doc.send(new TransactWriteCommand({ TransactItems: Array.from({ length: 101 }, (_, index) => put(`many${index}`)) }))).rejects.toThrow(/length between 1 and 100/);
    await expect(doc.send(new TransactWriteCommand({ TransactItems: [{ Delete: { TableName, Key: { pk: 'a', sk: 'x' } } }] }))).rejects.toThrow(/Update and Delete are not served/);
  });
});

// "Transaction conflict handling in DynamoDB":
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling
describe('a transaction in flight on the local emulator', () => {
  const putHeld = (pk: string, by: string) => doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk, sk: 'x', by } } }] }));

  it('rejects a PutItem, UpdateItem or DeleteItem of one of its items with TransactionConflictException (400, not retried by the SDK)', async () => {
    const gate = holdNextTransaction();
    const first = putHeld('held', 'transaction');
    await gate.reached;
    const writes = [
      new PutCommand({ TableName, Item: { pk: 'held', sk: 'x', by: 'put' } }),
      new UpdateCommand({ TableName, Key: { pk: 'held', sk: 'x' }, UpdateExpression: 'SET #by = :by', ExpressionAttributeNames: { '#by': 'by' }, ExpressionAttributeValues: { ':by': 'update' } }),
      new DeleteCommand({ TableName, Key: { pk: 'held', sk: 'x' } }),
    ];
    for (const write of writes) {
      const error = await doc.send(write as PutCommand).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TransactionConflictException);
      expect((error as TransactionConflictException).$metadata).toMatchObject({ httpStatusCode: 400, attempts: 1 });
    }
    // An item it does not hold is written at once.
    await doc.send(new PutCommand({ TableName, Item: { pk: 'beside', sk: 'x' } }));
    gate.open();
    await first;
    expect(await get('held')).toMatchObject({ by: 'transaction' });
    await doc.send(writes[0] as PutCommand);
    expect(await get('held')).toMatchObject({ by: 'put' });
  });

  it('cancels a TransactWriteItems that meets it, TransactionConflict the reason of the shared item, and writes none of its items', async () => {
    const gate = holdNextTransaction();
    const first = putHeld('shared', 'first');
    await gate.reached;
    const error = await doc
      .send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk: 'second-own', sk: 'x' } } }, { Put: { TableName, Item: { pk: 'shared', sk: 'x', by: 'second' } } }] }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect((error as TransactionCanceledException).CancellationReasons?.map((reason) => reason.Code)).toEqual(['None', 'TransactionConflict']);
    expect((error as TransactionCanceledException).$metadata).toMatchObject({ httpStatusCode: 400, attempts: 1 });
    gate.open();
    await first;
    expect(await get('shared')).toMatchObject({ by: 'first' });
    expect(await get('second-own')).toBeUndefined();
  });
});
