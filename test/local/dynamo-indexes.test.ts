import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';

let dynamo: LocalDynamo;
beforeAll(async () => {
  dynamo = await startDynamo();
});
afterAll(async () => dynamo.close());

const index = (name: string) => ({ IndexName: name, KeySchema: [{ AttributeName: name, KeyType: 'HASH' as const }], Projection: { ProjectionType: 'KEYS_ONLY' as const } });
const table = (indexes: string[]): CreateTableCommandInput => ({
  TableName: 'older',
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, ...indexes.map((name) => ({ AttributeName: name, AttributeType: 'S' as const }))],
  KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  GlobalSecondaryIndexes: indexes.map(index),
});

describe('a ledger table made by an older savepoint', () => {
  it('is refused naming the index it lacks (the emulator cannot add one), instead of failing at the first query', async () => {
    await ensureTable(dynamo.client, table(['byApprovalId']));
    await expect(ensureTable(dynamo.client, table(['byApprovalId', 'runningRuns']))).rejects.toThrow(
      /the ledger table older was made by an older savepoint and lacks the index\(es\) runningRuns/,
    );
    // The same table, opened by the version that made it, is fine.
    await expect(ensureTable(dynamo.client, table(['byApprovalId']))).resolves.toBeUndefined();
  });
});
