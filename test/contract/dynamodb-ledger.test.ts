import { afterAll, beforeAll } from 'vitest';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/dynamo.js';
import { ledgerTableFromTemplate } from '../../local/template.js';
import { cachedTemplate } from '../../local/template-cache.js';
import { describeLedgerContract } from './ledger.contract.js';

// The DynamoDB ledger on dynalite (in memory) with the real SDK: the conditional writes that deploy.
let dynamo: LocalDynamo;
let table: (name: string) => CreateTableCommandInput;
let tables = 0;

beforeAll(async () => {
  dynamo = await startDynamo();
  // The keys and indexes of the synthesized template, so the table is the one that deploys.
  const template = await cachedTemplate('agent');
  table = (name) => ledgerTableFromTemplate(template, name);
});
afterAll(async () => dynamo.close());

describeLedgerContract('DynamoDB on dynalite', async () => {
  // A fresh table per test: no test sees another's items.
  const name = `ledger-${++tables}`;
  await ensureTable(dynamo.client, table(name));
  const sealer = ephemeralSealer();
  const ledger = new DynamoDbLedger(dynamo.client, name, sealer);
  // Damage: the items themselves, changed with the SDK (what a person with table access could do).
  // (The document client shares the client's config: the ledger's marshalling options, kept.)
  const doc = DynamoDBDocumentClient.from(dynamo.client, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true } });
  const damage = async (runId: string, edit: (items: Map<string, Record<string, unknown>>) => void) => {
    const found = await doc.send(new QueryCommand({ TableName: name, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `RUN#${runId}` } }));
    const before = new Map((found.Items ?? []).map((item) => [String(item['sk']), item]));
    const after = new Map([...before].map(([sk, item]) => [sk, structuredClone(item)]));
    edit(after);
    for (const sk of before.keys()) if (!after.has(sk)) await doc.send(new DeleteCommand({ TableName: name, Key: { pk: `RUN#${runId}`, sk } }));
    for (const [sk, item] of after) {
      if (JSON.stringify(item) !== JSON.stringify(before.get(sk))) await doc.send(new PutCommand({ TableName: name, Item: { ...item, pk: `RUN#${runId}`, sk } }));
    }
    // A new instance: nothing it holds from earlier reads stands in for the table.
    return new DynamoDbLedger(dynamo.client, name, sealer);
  };
  // Another Lambda on the same table: its own instance, nothing read yet.
  return { ledger, damage, another: () => new DynamoDbLedger(dynamo.client, name, sealer) };
}, { damageable: true, sharesStore: true });
