import { afterAll, beforeAll } from 'vitest';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/dynamo.js';
import { ledgerTableFromTemplate, synthesizeTemplate } from '../../local/template.js';
import { describeLedgerContract } from './ledger.contract.js';

// The DynamoDB ledger on dynalite (in memory) with the real SDK: the conditional writes that deploy.
let dynamo: LocalDynamo;
let table: (name: string) => CreateTableCommandInput;
let tables = 0;

beforeAll(async () => {
  dynamo = await startDynamo();
  // The keys and indexes of the synthesized template, so the table is the one that deploys.
  const template = await synthesizeTemplate();
  table = (name) => ledgerTableFromTemplate(template, name);
});
afterAll(async () => dynamo.close());

describeLedgerContract('DynamoDB on dynalite', async () => {
  // A fresh table per test: no test sees another's items.
  const name = `ledger-${++tables}`;
  await ensureTable(dynamo.client, table(name));
  return { ledger: new DynamoDbLedger(dynamo.client, name) };
});
