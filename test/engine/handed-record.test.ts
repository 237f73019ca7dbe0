import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import type { TurnSeen } from '../../lambdas/ledger/ledger.js';
import { handedContent } from '../../lambdas/ledger/handed-versions.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import type { ToolCallRecord } from '../../lambdas/records/ledger-records.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { at, call, run, turn } from '../contract/fixtures.js';
import { countingClient } from '../support/counting-client.js';

/**
 * A read call's record on the versions its turn handed it (TurnLedger `recordCall` with a basis,
 * steps/handed-step.ts), on DynamoDB: one request — a conditional put of the record alone, no
 * transaction with the run or kill item (a turn's parallel reads, each in its own Lambda instance
 * on AWS, would meet each other's) — and never a write of the run item. A run item altered behind
 * the ledger is left as it is, and the next read names it (the next model turn's, where the call's
 * own read named it before: test/engine/integrity.test.ts).
 */
let dynamo: LocalDynamo;
let tables = 0;
const clients: DynamoDBClient[] = [];
beforeAll(async () => {
  dynamo = await startDynamo();
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await dynamo.close();
});

async function table() {
  const name = `handed-${++tables}`;
  await ensureTable(dynamo.client, ledgerTableFromTemplate(await cachedTemplate('agent'), name));
  const sent: string[] = [];
  const client = countingClient(dynamo, (command) => sent.push(command));
  clients.push(client);
  const sealer = ephemeralSealer();
  const ledger = new DynamoDbLedger(client, name, sealer);
  await ledger.createRun(run('r1'));
  let seen: TurnSeen | undefined;
  await ledger.recordTurn(turn(3), { stepKey: 'turn:3', deltas: { steps: 1, modelTurns: 1 }, handing: (saw) => (seen = saw) });
  const basis = { ...seen!.basis!, content: handedContent(seen!.run, seen!.globalKill, turn(3)) };
  return { name, ledger, sealer, seen: { ...seen!, basis }, requests: () => [...sent] };
}

const completed = { ...call({ effect: 'read' }), status: 'completed', outcome: 'ok', result: '{"order":1}', latencyMs: 2, recordedAt: at(1).toISOString() } as ToolCallRecord & { status: 'completed' };

describe('a read recorded on handed versions, DynamoDB', () => {
  it('is one PutItem, with no read', async () => {
    const { ledger, seen, requests } = await table();
    const before = requests().length;
    expect(await ledger.recordCall(completed, at(2), undefined, seen.basis)).toMatchObject({ recorded: true });
    expect(requests().slice(before)).toEqual(['PutItemCommand']);
  });

  it('leaves a run item altered behind the ledger (its seal kept) as it is: the next read names it', async () => {
    const { name, ledger, sealer, seen } = await table();
    await dynamo.client.send(
      new UpdateItemCommand({ TableName: name, Key: { pk: { S: 'RUN#r1' }, sk: { S: 'RUN' } }, UpdateExpression: 'SET config.maxDollars = :lots', ExpressionAttributeValues: { ':lots': { N: '9999' } } }),
    );
    // The record's put checks nothing of the run item: the record goes in.
    expect(await ledger.recordCall(completed, at(2), undefined, seen.basis)).toMatchObject({ recorded: true });
    // Nothing wrote the run item from what was handed (which would seal the alteration over, or restore it unseen).
    await expect(new DynamoDbLedger(dynamo.client, name, sealer).getRun('r1')).rejects.toThrow(/ledger integrity: run r1, record RUN fails verification/);
    await expect(ledger.loadStep('r1')).rejects.toThrow(/record RUN fails verification/);
  });
});
