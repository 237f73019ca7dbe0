import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/dynamo.js';

// TransactWriteItems on the emulator (local/dynamo-transactions.ts), through the real SDK, by the
// rules of https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html.
let dynamo: LocalDynamo;
let doc: DynamoDBDocumentClient;
const TableName = 'transactions';

beforeAll(async () => {
  dynamo = await startDynamo();
  await ensureTable(dynamo.client, {
    TableName,
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  doc = DynamoDBDocumentClient.from(dynamo.client);
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
