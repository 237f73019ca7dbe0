import { afterEach, describe, expect, it } from 'vitest';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import type { DynamoDbLostAnswers } from '../../local/aws/dynamodb-lost-answers.js';
import { startLocalStack } from '../../local/runtime/local-stack.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { documentClient } from '../support/document-client.js';

// A write that committed and whose answer was lost (local/aws/dynamodb-lost-answers.ts: a 500
// InternalServerError after the commit, or a cut connection), through the real SDK, which retries
// it by itself; and TransactWriteItems' ClientRequestToken (local/aws/dynamodb-transactions.ts), by
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html.
const TableName = 'lost-answers';
let dynamo: LocalDynamo | undefined;
afterEach(async () => {
  await dynamo?.close();
  dynamo = undefined;
});

async function start(lostAnswers?: DynamoDbLostAnswers): Promise<DynamoDBDocumentClient> {
  dynamo = await startDynamo(lostAnswers && { lostAnswers });
  await ensureTable(dynamo.client, {
    TableName,
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  return documentClient(dynamo);
}
const absent = { ConditionExpression: 'attribute_not_exists(pk)' };
const get = async (doc: DynamoDBDocumentClient, pk: string) => (await doc.send(new GetCommand({ TableName, Key: { pk, sk: 'x' }, ConsistentRead: true }))).Item;

describe('a DynamoDB write whose answer is lost after it committed', () => {
  it.each(['InternalServerError', 'ECONNRESET'] as const)('(%s) is retried by the SDK, and a conditional PutItem then fails its condition on its own write', async (as) => {
    // Only the first committed write loses its answer.
    const doc = await start({ every: 1_000, first: 1, operations: ['PutItem'], as });
    const error = await doc.send(new PutCommand({ TableName, Item: { pk: 'once', sk: 'x', v: 1 }, ...absent })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    // The SDK sent it twice: the first attempt landed, the second met it.
    expect((error as ConditionalCheckFailedException).$metadata.attempts).toBe(2);
    expect(await get(doc, 'once')).toMatchObject({ v: 1 });
    expect(dynamo!.lostAnswers).toMatchObject({ requests: 2, succeeded: 1, lost: 1, retried: 1, lostWrites: ['PutItem once|x'] });
  });

  it('is a TransactWriteItems the SDK retries with its ClientRequestToken: answered success, applied once', async () => {
    const doc = await start({ every: 1_000, first: 1, operations: ['TransactWriteItems'] });
    // Applied twice, its condition would cancel the second: the retry's answer is the first's.
    const answer = await doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk: 'tx', sk: 'x', v: 1 }, ...absent } }] }));
    expect(answer.$metadata.attempts).toBe(2);
    expect(await get(doc, 'tx')).toMatchObject({ v: 1 });
    // Both attempts succeeded: the first's answer lost, the retry's the token's.
    expect(dynamo!.lostAnswers).toMatchObject({ requests: 2, succeeded: 2, lost: 1, retried: 1, lostWrites: ['TransactWriteItems tx|x'] });
  });

  it('counts only writes that succeeded: a refused one keeps its answer', async () => {
    const doc = await start({ every: 2, operations: ['PutItem'] });
    await doc.send(new PutCommand({ TableName, Item: { pk: 'first', sk: 'x' } }));
    await expect(doc.send(new PutCommand({ TableName, Item: { pk: 'first', sk: 'x' }, ...absent }))).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(dynamo!.lostAnswers).toMatchObject({ succeeded: 1, lost: 0 });
    // The second write that succeeds loses its answer (every 2nd, from the 2nd); its retry, the third, keeps it.
    await doc.send(new PutCommand({ TableName, Item: { pk: 'second', sk: 'x' } }));
    expect(dynamo!.lostAnswers).toMatchObject({ succeeded: 3, lost: 1, retried: 1 });
  });

  it.each([
    [{ every: 1 }, 'dynamoDbLostAnswers.every must be a whole number of at least 2, got 1'],
    [{ every: 3, first: 0 }, 'dynamoDbLostAnswers.first must be a whole number of at least 1, got 0'],
    [{ every: 3, operations: ['GetItem'] }, 'dynamoDbLostAnswers.operations must be a non-empty list of PutItem, UpdateItem, DeleteItem, TransactWriteItems, got ["GetItem"]'],
    [{ every: 3, as: 'timeout' }, "dynamoDbLostAnswers.as must be 'InternalServerError' or 'ECONNRESET', got \"timeout\""],
  ])('fails when the option is bad (%o), naming it', async (option, message) => {
    await expect(startDynamo({ lostAnswers: option as DynamoDbLostAnswers })).rejects.toThrow(message);
  });

  it('fails on a stack whose ledger is not DynamoDB, before anything starts', async () => {
    await expect(startLocalStack({ agent: refundReconciler, dynamoDbLostAnswers: { every: 3 } })).rejects.toThrow("dynamoDbLostAnswers needs ledger: 'dynalite'");
  });
});

describe("TransactWriteItems' ClientRequestToken", () => {
  const put = (pk: string, v: number, token: string) => new TransactWriteCommand({ ClientRequestToken: token, TransactItems: [{ Put: { TableName, Item: { pk, sk: 'x', v }, ...absent } }] });

  it('answers the same request again with success, not applying it twice', async () => {
    const doc = await start();
    await doc.send(put('token', 1, 'token-1'));
    // Without the token the second would be cancelled by its condition.
    await expect(doc.send(put('token', 1, 'token-1'))).resolves.toBeDefined();
    await expect(doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: { pk: 'token', sk: 'x', v: 1 }, ...absent } }] }))).rejects.toThrow(/ConditionalCheckFailed/);
    expect(await get(doc, 'token')).toMatchObject({ v: 1 });
  });

  it('refuses the token with other parameters: IdempotentParameterMismatchException', async () => {
    const doc = await start();
    await doc.send(put('mismatch', 1, 'token-2'));
    await expect(doc.send(put('mismatch', 2, 'token-2'))).rejects.toMatchObject({ name: 'IdempotentParameterMismatchException' });
    expect(await get(doc, 'mismatch')).toMatchObject({ v: 1 });
  });

  it('holds no token of a cancelled transaction: sent again, it is decided again', async () => {
    const doc = await start();
    await doc.send(new PutCommand({ TableName, Item: { pk: 'held', sk: 'x', v: 0 } }));
    await expect(doc.send(put('held', 1, 'token-3'))).rejects.toThrow(/ConditionalCheckFailed/);
    await doc.send(new DeleteCommand({ TableName, Key: { pk: 'held', sk: 'x' } }));
    await doc.send(put('held', 1, 'token-3'));
    expect(await get(doc, 'held')).toMatchObject({ v: 1 });
  });
});
